/**
 * What the index knows at a glance, and every change it has recorded in time order
 * (docs/decisions.md#the-home-page, docs/api.md#changes): the counts the triggers of migration 8 keep,
 * the latest changes of verdict, the issuers vouching for the most members, and the changes paged by
 * a cursor that names a change by what it is (its time, entity, kind and claim), so a cursor handed
 * out before an export still points at the same place after its import. Every read is bounded
 * whatever the index's size: the counts are a few rows, the changes are read by their index on time.
 */
import { z } from "zod";
import type { Queryable } from "./db";
import { changeId, type FeedChange } from "./feeds";

/** What the home page says the index holds. */
export type IndexCounts = { entities: number; accepted: number; verified_claims: number; issuers: number };

export async function indexCounts(db: Queryable): Promise<IndexCounts> {
  const rows = await db.query<{ name: string; value: string | number }>("SELECT name, sum(value) AS value FROM index_counts GROUP BY name");
  const of = (name: string) => Number(rows.find((r) => r.name === name)?.value ?? 0);
  return { entities: of("entities"), accepted: of("accepted"), verified_claims: of("verified_claims"), issuers: of("issuers") };
}

/** An issuer and the members it vouches for: the credentials it issued that verify. */
export type TopIssuer = { issuer: string; members: number };

export async function topIssuers(db: Queryable, limit = 5): Promise<TopIssuer[]> {
  const rows = await db.query<{ issuer: string; members: number }>(
    "SELECT issuer, members FROM issuer_members WHERE members > 0 ORDER BY members DESC, issuer LIMIT $1",
    [limit],
  );
  return rows.map((r) => ({ issuer: r.issuer, members: Number(r.members) }));
}

/** Where a page of changes starts: just after (or before) the change it names. Opaque to clients. */
export const ChangeCursor = z.tuple([z.iso.datetime(), z.string().max(253), z.string().max(16), z.string().max(1024)]);
export type ChangeCursor = z.infer<typeof ChangeCursor>;

/** The cursor of a change: base64url of what the change is. */
export const cursorOf = (c: Pick<FeedChange, "at" | "domain" | "kind" | "claim_key">): string =>
  Buffer.from(JSON.stringify([c.at, c.domain, c.kind, c.claim_key])).toString("base64url");

/** A cursor this index handed out, or null for anything else. */
export function decodeChangeCursor(text: string): ChangeCursor | null {
  if (text.length > 2048 || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  try {
    const parsed = ChangeCursor.safeParse(JSON.parse(Buffer.from(text, "base64url").toString("utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

type Row = Omit<FeedChange, "at"> & { at: Date };
const toChange = (r: Row): FeedChange => Object.assign({}, r, { at: r.at.toISOString() });

const SELECT = `SELECT ch.domain, e.name, ch.kind, ch.claim_key, ch.id, c.label, ch.at, ch.status, ch.verified, ch.reason
  FROM changes ch JOIN entities e ON e.domain = ch.domain
  LEFT JOIN claims c ON c.domain = ch.domain AND c.kind = ch.kind AND c.claim_key = ch.claim_key`;

/** A page of changes and whether more follow it. */
export type ChangePage = { changes: FeedChange[]; more: boolean };

/**
 * Up to `limit` changes in time order: oldest first after `after` (from the first recorded when
 * null), or newest first before `before` (from the latest when null).
 */
export async function changesPage(
  db: Queryable,
  where: { after: ChangeCursor | null } | { before: ChangeCursor | null },
  limit: number,
): Promise<ChangePage> {
  const forward = "after" in where;
  const cursor = forward ? where.after : where.before;
  const order = forward ? "ASC" : "DESC";
  const from = cursor ? `WHERE (ch.at, ch.domain, ch.kind, ch.claim_key) ${forward ? ">" : "<"} ($1::timestamptz, $2, $3, $4)` : "";
  const params: unknown[] = cursor ? [...cursor, limit + 1] : [limit + 1];
  const rows = await db.query<Row>(
    `${SELECT} ${from} ORDER BY ch.at ${order}, ch.domain ${order}, ch.kind ${order}, ch.claim_key ${order} LIMIT $${params.length}`,
    params,
  );
  return { changes: rows.slice(0, limit).map(toChange), more: rows.length > limit };
}

/** The changes the API answers in one page at most, and when none is asked. */
export const CHANGES_MAX = 200;
export const CHANGES_DEFAULT = 50;

export const CHANGES_SCHEMA = "ident-resolver/changes@1";

/** One change of verdict as the API gives it (docs/api.md#changes). */
export const ChangeItem = z.object({
  id: z.string().meta({ description: "The change's id, the same as its entry's in every Atom feed." }),
  at: z.string().meta({ description: "When the check that found it ran (ISO-8601, UTC)." }),
  domain: z.string(),
  name: z.string().nullable().meta({ description: "The entity's name as the index knows it." }),
  kind: z.string().meta({ description: "`entity` for the entity's own status, else the kind of the claim." }),
  claim: z.string().nullable().meta({ description: "The claim's id as published; null for the entity's own status." }),
  label: z.string().nullable().meta({ description: "The claim's label (a property's name, a credential's title)." }),
  status: z.string().nullable().meta({ description: "The entity's status, for a change of the entity's own." }),
  verified: z.boolean().nullable(),
  reason: z.string().nullable().meta({ description: "Why a claim is not verified (docs/decisions.md#reasons)." }),
  url: z.string().meta({ description: "The entity's page." }),
  cursor: z.string().meta({ description: "Where a page that starts after this change starts." }),
});
export type ChangeItem = z.infer<typeof ChangeItem>;

export const Changes = z.object({
  schema: z.literal(CHANGES_SCHEMA),
  changes: z.array(ChangeItem),
  next_cursor: z.string().nullable().meta({ description: "The `after` of the next page; null when this page reaches the latest change." }),
});
export type Changes = z.infer<typeof Changes>;

/** A page of changes as the API answers it. */
export function changesAnswer(page: ChangePage): Changes {
  const changes = page.changes.map((c): ChangeItem => ({
    id: changeId(c),
    at: c.at,
    domain: c.domain,
    name: c.name,
    kind: c.kind,
    claim: c.kind === "entity" ? null : c.id,
    label: c.label,
    status: c.status,
    verified: c.verified,
    reason: c.reason,
    url: `/entity/${c.domain}`,
    cursor: cursorOf(c),
  }));
  const last = changes.at(-1);
  return { schema: CHANGES_SCHEMA, changes, next_cursor: page.more && last ? last.cursor : null };
}
