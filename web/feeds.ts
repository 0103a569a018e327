/**
 * Atom 1.0 feeds of recorded changes of verdict (docs/api.md#feeds): `/entity/{domain}/feed.xml`, an
 * entity's own, and `/issuer/{domain}/feed.xml`, those of the credentials a domain issues. One entry
 * per change, newest first, with an id made from what the change is (its entity, claim and time), so
 * it is the same on every instance and after the index is moved. Written from the index only.
 */
import { ownValue } from "ident-resolver";
import { reasonText, statusText } from "ident-resolver/present";
import { cleanText, clip, MAX_NAME_LENGTH } from "ident-resolver/present";
import { changeId, type FeedChange } from "ident-resolver/store";
import { xml } from "./xml";

export const ATOM_TYPE = "application/atom+xml; charset=utf-8";

/** Publisher text as a line of a feed: cleaned as every surface cleans it, no bidi controls, clipped (docs/decisions.md#rendering). */
const line = (text: string, max = 120) => clip(cleanText(text, "inline"), max);

const KIND_WORDS: Record<FeedChange["kind"], string> = {
  entity: "entity",
  properties: "Property",
  credentials: "Credential",
  connections: "Connection",
};

/**
 * What changed, in plain words: the title of its entry. The status, reason and kind are the index's,
 * which an import fills with any text: a status outside the closed set is said as itself, a reason
 * or kind in neutral words (docs/decisions.md#rendering).
 */
export function changeTitle(change: FeedChange): string {
  const who = line(change.name ?? change.domain, 70);
  if (change.kind === "entity") {
    if (change.status === "accepted") return `${who}: the entity is accepted`;
    const status = change.status === null ? "changed" : (statusText(change.status) ?? line(change.status, 70));
    return `${who}: ${status}`;
  }
  const claim = line(change.label ?? change.id ?? change.claim_key, 90);
  const kind = ownValue(KIND_WORDS, change.kind) ?? "Claim";
  if (change.verified) return `${who}: ${kind} ${claim} is verified`;
  return `${who}: ${kind} ${claim} is no longer verified (${reasonText(change.reason ?? "") ?? "not verified"})`;
}

export type FeedOptions = {
  /** The feed's own address, absolute: its id and its `self` link. */
  self: string;
  /** The page it follows, absolute. */
  page: string;
  title: string;
  /** When nothing has changed yet: the feed's `updated`. */
  since: string;
  /** The page of each entry's entity, absolute. */
  entityPage(domain: string): string;
  /** The WebSub hub that pushes this feed's new entries (docs/notices.md#websub), absolute. */
  hub?: string;
  /** The other pages of a paged feed (RFC 5005 §3: `first`, `next`), absolute. */
  pages?: { rel: "first" | "next"; href: string }[];
};

/** The Atom document of `changes` (newest first). */
export function atomFeed(changes: readonly FeedChange[], o: FeedOptions): string {
  const entries = changes.map((c) => {
    const title = changeTitle(c);
    const id = changeId(c);
    const what = c.kind === "entity" ? `${c.domain}` : `${c.domain}, ${line(c.id ?? c.claim_key, MAX_NAME_LENGTH)}`;
    return [
      "  <entry>",
      `    <id>${id}</id>`,
      `    <title type="text">${xml(title)}</title>`,
      `    <updated>${c.at}</updated>`,
      `    <link rel="alternate" type="text/html" href="${xml(o.entityPage(c.domain))}"/>`,
      `    <summary type="text">${xml(`${title}. Recorded at ${c.at} for ${what}.`)}</summary>`,
      "  </entry>",
    ].join("\n");
  });
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    `  <id>${xml(o.self)}</id>`,
    `  <title type="text">${xml(line(o.title, 160))}</title>`,
    `  <updated>${changes[0]?.at ?? o.since}</updated>`,
    `  <link rel="self" type="application/atom+xml" href="${xml(o.self)}"/>`,
    `  <link rel="alternate" type="text/html" href="${xml(o.page)}"/>`,
    ...(o.hub ? [`  <link rel="hub" href="${xml(o.hub)}"/>`] : []),
    ...(o.pages ?? []).map((p) => `  <link rel="${p.rel}" type="application/atom+xml" href="${xml(p.href)}"/>`),
    "  <author><name>ident resolver</name></author>",
    "  <generator>ident resolver</generator>",
    ...entries,
    "</feed>",
    "",
  ].join("\n");
}
