/**
 * Fetching one document with its HTML fallback (V7): the JSON URL first; on `not_found`, and only
 * then, the embed in the fallback page (docs/decisions.md#fetching, docs/decisions.md#the-html-fallback).
 */
import { htmlReady } from "../documents/embed.ts";
import { cut, keptId, MAX_NAME_LENGTH } from "../documents/display-limits.ts";
import type { JsonParse } from "../documents/json.ts";
import { warning, type Problem } from "../documents/problem.ts";
import type { CachedOutcome } from "../fetch/cache.ts";
import type { FailureStatus, FetchMode, FetchOutcome } from "../fetch/outcome.ts";
import { isRefusal, type FetchRefusal, type RefusalKind } from "../traffic/refusal.ts";
import type { DocumentLocation } from "../protocol/locations.ts";
import type { Source } from "../result/record.ts";
import type { ParseMemo } from "./memo.ts";

export type ResolveOptions = {
  /** Fetch again now, whatever the cache holds (`?refresh=1`). */
  refresh?: boolean;
  /** Fetch again what is no longer fresh rather than answer it stale (re-verification). */
  revalidate?: boolean;
  /** Background work (discovery, re-verification): its fetches wait behind every person's (docs/decisions.md#discovery). */
  background?: boolean;
  /** Answer from the cache alone; a document not cached ends the resolution with {@link NotCached}. */
  cacheOnly?: boolean;
  /**
   * The live check: a fetch refused now answers its refusal (a claim `not_checked`), never the
   * document known from before that a lookup is answered with (docs/architecture.md#traffic).
   */
  live?: boolean;
  /** What this query has spent; made by the resolver when not given, and readable afterwards. */
  work?: QueryWork;
  /**
   * Whose lookup this is, for the per-client share of an address's minute (docs/architecture.md#traffic).
   * @default "background" for background work, else "local"
   */
  client?: string;
};

/** The fetches one query started, and the work it was refused (docs/decisions.md#outbound-work). */
export type QueryWork = {
  fetches: number;
  /** Every refusal met, whether it stopped a claim or a known document stood in for its fetch. */
  refused: RefusalKind[];
  /** Fetches refused whose document, known from before, was answered instead: not fetched again now. */
  knownServed: FetchRefusal[];
  /** The earliest time an answer the query read from the cache changes by itself, in ms. */
  until: number;
};

export const newWork = (): QueryWork => ({ fetches: 0, refused: [], knownServed: [], until: Infinity });

/** Thrown by a cache-only load that would have to fetch; the resolver's `peek` answers null. */
export class NotCached extends Error {
  constructor(
    url: string,
    /** A fetch of the URL is already running: a lookup now would join it, not start one. */
    readonly loading: boolean,
  ) {
    super(`${url} is not cached`);
  }
}

/** The outcome for a URL: from the cache, or fetched through the traffic limits; or their refusal. */
export type Load = (url: string, mode: FetchMode, options: ResolveOptions) => Promise<CachedOutcome | FetchRefusal>;

/** A document fetched with its fallback: its text parsed as JSON and where it came from, or why not. */
export type DocFetch =
  | { ok: true; json: JsonParse; source: Source; problems: Problem[]; fetchedAt: number; stale: boolean }
  | { ok: false; status: FailureStatus; message: string; detail?: string; fetchedAt: number; stale: boolean; httpStatus?: number };

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export const LABEL: Record<DocumentLocation["kind"], string> = {
  entity: "entity document",
  property: "property document",
  credential: "credential document",
};

/** The library's words behind a failed fetch, when there are any. */
const detailOf = (outcome: FetchOutcome): { detail?: string } => (!outcome.ok && outcome.detail ? { detail: outcome.detail } : {});

/** Plain words for a failed fetch. */
function failureMessage(loc: DocumentLocation, json: FetchOutcome, page?: FetchOutcome): string {
  const what = `${new URL(loc.json).host}'s ${LABEL[loc.kind]}`;
  if (json.ok) return `${what} was found`;
  switch (json.status) {
    case "not_found":
      if (page && !page.ok && page.status !== "not_found") {
        return `${what} is not at ${loc.json} (${json.message}), and the page ${loc.page} for the embedded fallback failed: ${page.message}`;
      }
      return `${what} is not at ${loc.json} (${json.message}), and ${loc.page} has no <script type="application/json" id="${loc.elementId}"> fallback`;
    case "timeout":
      return `${what} at ${loc.json} did not arrive in time: ${json.message}`;
    case "unreachable":
      return `${what} at ${loc.json} could not be reached: ${json.message}`;
    case "too_large":
      return `${what} at ${loc.json} is too large: ${json.message}`;
    case "blocked":
      return `${what} at ${loc.json} was not fetched because it leads somewhere the resolver does not go: ${json.message}`;
  }
}

/**
 * Where a claim's evidence came from (docs/decisions.md#the-result-record): its URL (a redirect's, a
 * publisher's) and content type kept to an id's and a name's lengths (docs/decisions.md#validation).
 */
export function toSource(outcome: FetchOutcome & { ok: true }, via: Source["via"], bytes = outcome.bytes): Source {
  const type = outcome.contentType;
  return {
    url: keptId(outcome.finalUrl),
    via,
    http_status: outcome.httpStatus,
    content_type: type === null || type.length <= MAX_NAME_LENGTH ? type : cut(type, MAX_NAME_LENGTH),
    bytes,
    ms: outcome.ms,
  };
}

/** Fetches a document; on `not_found`, and only then, its HTML embed (V7). A refusal on the way is the answer. */
export function createDocumentFetch(load: Load, memo: ParseMemo) {
  return async function fetchDocument(loc: DocumentLocation, opts: ResolveOptions): Promise<DocFetch | FetchRefusal> {
    const json = await load(loc.json, "json", opts);
    if (isRefusal(json)) return json;
    if (json.outcome.ok) {
      const problems: Problem[] = [];
      const type = json.outcome.contentType;
      if (!type || !JSON_TYPE.test(type)) {
        problems.push(
          warning("content_type", `${loc.json} was served as ${type ?? "no Content-Type"}, not application/json; parsed all the same`),
        );
      }
      const doc = memo.json(json.outcome, null);
      if (doc === null) throw new Error("invariant broken: a body is always text");
      return { ok: true, json: doc.json, source: toSource(json.outcome, "json"), problems, fetchedAt: json.fetchedAt, stale: json.stale };
    }
    if (json.outcome.status !== "not_found") {
      return {
        ok: false,
        status: json.outcome.status,
        message: failureMessage(loc, json.outcome),
        ...detailOf(json.outcome),
        fetchedAt: json.fetchedAt,
        stale: json.stale,
      };
    }
    const page = await load(loc.page, "html", opts);
    if (isRefusal(page)) return page;
    const stale = json.stale || page.stale;
    const fetchedAt = Math.min(json.fetchedAt, page.fetchedAt);
    if (page.outcome.ok) {
      await htmlReady();
      const embed = memo.json(page.outcome, loc.elementId);
      if (embed !== null)
        return { ok: true, json: embed.json, source: toSource(page.outcome, "embed", embed.bytes), problems: [], fetchedAt, stale };
    }
    const status: FailureStatus = !page.outcome.ok && page.outcome.status !== "not_found" ? page.outcome.status : "not_found";
    return {
      ok: false as const,
      status,
      message: failureMessage(loc, json.outcome, page.outcome),
      ...detailOf(!page.outcome.ok && page.outcome.status !== "not_found" ? page.outcome : json.outcome),
      fetchedAt,
      stale,
      // The JSON URL's own answer (a 503 is a publisher's outage, a 404 a missing document: docs/decisions.md#the-index).
      ...(json.outcome.httpStatus === null ? {} : { httpStatus: json.outcome.httpStatus }),
    };
  };
}

export type FetchDocument = ReturnType<typeof createDocumentFetch>;
