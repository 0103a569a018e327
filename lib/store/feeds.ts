/**
 * The changes of verdict behind the Atom feeds (docs/api.md#feeds): an entity's own, and those of the
 * credentials one domain issues, newest first, each with what names it (the entity's name, the
 * claim's label). Read from the index only; nothing is fetched.
 */
import { createHash } from "node:crypto";
import type { ClaimKind } from "./verdicts.ts";
import type { Queryable } from "./db.ts";

/** One recorded change, with what a reader needs to say what changed. */
export type FeedChange = {
  domain: string;
  /** The entity's name as the index knows it. */
  name: string | null;
  kind: "entity" | ClaimKind;
  /** The claim's key within its entity ("" for the entity's own status): with `domain`, `kind` and `at`, unique. */
  claim_key: string;
  id: string | null;
  /** The claim's label (a credential's title, a property's name) as last recorded. */
  label: string | null;
  at: string;
  status: string | null;
  verified: boolean | null;
  reason: string | null;
};

/**
 * A change's id: a name-based (version 5 style) UUID of what the change is (its entity, kind, claim
 * and time), the same on every instance, in every feed and in the API, and after the index is moved.
 */
export function changeId(c: Pick<FeedChange, "domain" | "kind" | "claim_key" | "at">): string {
  const h = createHash("sha1").update(`ident-resolver change ${c.domain} ${c.kind} ${c.claim_key} ${c.at}`).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString("hex");
  return `urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Changes a feed lists at most. */
export const FEED_ENTRIES = 50;

type Row = Omit<FeedChange, "at"> & { at: Date };
const toChange = (r: Row): FeedChange => Object.assign({}, r, { at: r.at.toISOString() });

/** `domain`'s own recorded changes, newest first, and when it was last checked; null when the index does not know it. */
export async function entityChanges(
  db: Queryable,
  domain: string,
  limit = FEED_ENTRIES,
): Promise<{ domain: string; name: string | null; last_checked_at: string; changes: FeedChange[] } | null> {
  const [entity] = await db.query<{ name: string | null; last_checked_at: Date }>(
    "SELECT name, last_checked_at FROM entities WHERE domain = $1",
    [domain],
  );
  if (!entity) return null;
  const rows = await db.query<Row>(
    `SELECT ch.domain, e.name, ch.kind, ch.claim_key, ch.id, c.label, ch.at, ch.status, ch.verified, ch.reason
     FROM changes ch JOIN entities e ON e.domain = ch.domain
     LEFT JOIN claims c ON c.domain = ch.domain AND c.kind = ch.kind AND c.claim_key = ch.claim_key
     WHERE ch.domain = $1 ORDER BY ch.at DESC, ch.seq DESC LIMIT $2`,
    [domain, limit],
  );
  return { domain, name: entity.name, last_checked_at: entity.last_checked_at.toISOString(), changes: rows.map(toChange) };
}

/** The recorded changes of the credentials the index knows `issuer` issues, newest first. */
export async function issuerChanges(db: Queryable, issuer: string, limit = FEED_ENTRIES): Promise<FeedChange[]> {
  const rows = await db.query<Row>(
    `SELECT ch.domain, e.name, ch.kind, ch.claim_key, ch.id, c.label, ch.at, ch.status, ch.verified, ch.reason
     FROM claims c
     JOIN changes ch ON ch.domain = c.domain AND ch.kind = c.kind AND ch.claim_key = c.claim_key
     JOIN entities e ON e.domain = c.domain
     WHERE c.issuer = $1 AND c.kind = 'credentials'
     ORDER BY ch.at DESC, ch.seq DESC LIMIT $2`,
    [issuer.toLowerCase(), limit],
  );
  return rows.map(toChange);
}
