/**
 * Atom 1.0 feeds of recorded changes of verdict (docs/api.md#feeds): `/entity/{domain}/feed.xml`, an
 * entity's own, and `/issuer/{domain}/feed.xml`, those of the credentials a domain issues. One entry
 * per change, newest first, with an id made from what the change is (its entity, claim and time), so
 * it is the same on every instance and after the index is moved. Written from the index only.
 */
import { createHash } from "node:crypto";
import { ownValue } from "../lib/objects";
import { reasonText, statusText } from "../lib/present/explain";
import { clip, withoutBidiControls } from "../lib/present/display";
import type { FeedChange } from "../lib/store/feeds";
import { xml } from "./xml";

export const ATOM_TYPE = "application/atom+xml; charset=utf-8";

/** A name-based (version 5 style) UUID of `name`: the entry's id, stable wherever it is written. */
function stableId(name: string): string {
  const h = createHash("sha1").update(`ident-resolver change ${name}`).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString("hex");
  return `urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Publisher text as a line of a feed: no bidi controls, clipped. */
const line = (text: string, max = 120) => clip(withoutBidiControls(text), max);

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
};

/** The Atom document of `changes` (newest first). */
export function atomFeed(changes: readonly FeedChange[], o: FeedOptions): string {
  const entries = changes.map((c) => {
    const title = changeTitle(c);
    const id = stableId(`${c.domain} ${c.kind} ${c.claim_key} ${c.at}`);
    const what = c.kind === "entity" ? `${c.domain}` : `${c.domain}, ${c.id ?? c.claim_key}`;
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
    "  <author><name>ident resolver</name></author>",
    "  <generator>ident resolver</generator>",
    ...entries,
    "</feed>",
    "",
  ].join("\n");
}
