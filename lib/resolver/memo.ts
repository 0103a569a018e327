/**
 * Documents parsed once per cached fetch. A cached outcome never changes (docs/decisions.md#caching),
 * so its JSON, one embed in it, or the rel=me verdict of a page is worked out once: a warm page does
 * not parse and validate every document again on each request.
 */
import { utf8Bytes } from "../documents/display-limits.ts";
import { extractEmbed } from "../documents/embed.ts";
import { parseJson, type JsonParse } from "../documents/json.ts";
import type { FetchOutcome } from "../fetch/outcome.ts";
import type { Verdict } from "../protocol/reasons.ts";
import { verifyConnection } from "../rules/connection.ts";

type Found = FetchOutcome & { ok: true };
export type ParsedBody = { json: JsonParse; bytes: number };

export type ParseMemo = {
  /** The body of `outcome` (`embedId` null) or the embed `embedId` in it, parsed as JSON; null when the page has no such embed. */
  json(outcome: Found, embedId: string | null): ParsedBody | null;
  /** The rel=me verdict of a fetched page for an entity of `domain`. */
  connection(domain: string, outcome: Found): Verdict;
};

export function createParseMemo(): ParseMemo {
  const parsed = new WeakMap<FetchOutcome, Map<string, ParsedBody | null>>();
  const verdicts = new WeakMap<FetchOutcome, { domain: string; verdict: Verdict }>();
  return {
    json(outcome, embedId) {
      let parts = parsed.get(outcome);
      if (!parts) parsed.set(outcome, (parts = new Map()));
      const part = embedId ?? "";
      let hit = parts.get(part);
      if (hit === undefined) {
        const text = embedId === null ? outcome.body : extractEmbed(outcome.body, embedId);
        hit = text === null ? null : { json: parseJson(text), bytes: embedId === null ? outcome.bytes : utf8Bytes(text) };
        parts.set(part, hit);
      }
      return hit;
    },
    connection(domain, outcome) {
      const hit = verdicts.get(outcome);
      if (hit?.domain === domain) return hit.verdict;
      const verdict = verifyConnection(domain, outcome.finalUrl, outcome.body);
      verdicts.set(outcome, { domain, verdict });
      return verdict;
    },
  };
}
