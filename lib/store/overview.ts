/**
 * What the index knows at a glance, and every change it has recorded in the order it recorded them
 * (docs/decisions.md#the-home-page, docs/api.md#changes): the counts the triggers of migration 8 keep,
 * the latest changes of verdict, the issuers vouching for the most members, and the changes paged by
 * a cursor that names a position (docs/decisions.md#the-order-of-changes), which an export keeps.
 * Every read is bounded whatever the index's size: the counts are a few rows, the changes are read
 * by their index on position.
 */
import { z } from "zod";
import type { Queryable } from "./db.ts";
import { changeId, type FeedChange } from "./feeds.ts";
import { lastPosition } from "./positions.ts";
import { CLAIM_KINDS } from "./verdicts.ts";

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

/** Cursors of the older form (before positions) and the text of any cursor are no longer than this. */
export const MAX_CURSOR_LENGTH = 2048;
/** Digits of a position: up to 10^15, within a bigint and exact in a JavaScript number. */
const POSITION = /^p([1-9][0-9]{0,14})$/;
/** A surrogate not in a pair: JSON may hold one, which no text of the index does. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Text the engines take: no NUL, no lone surrogate (docs/api.md#changes). */
const Text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((t) => !t.includes("\0") && !LONE_SURROGATE.test(t), "a character no text of the index holds");

/**
 * A cursor of the older form: base64url of what its change is (time, entity, kind, claim), as the
 * index handed them out before positions; read by the change it names (docs/api.md#changes).
 */
const NamedChange = z.tuple([
  // As the index writes a time (toISOString), from the year 2020: another text names no change.
  z.iso.datetime().refine((t) => t >= "2020" && new Date(t).toISOString() === t, "a time no index holds"),
  Text(253),
  z.enum(["entity", ...CLAIM_KINDS]),
  Text(MAX_CURSOR_LENGTH),
]);

/**
 * Where a page of changes starts (docs/api.md#changes): just after (or before) a position, or the
 * change an older cursor names. Parsed before any read: a cursor that is neither is refused here.
 */
export type ChangeCursor = { position: string } | { named: z.infer<typeof NamedChange> };

/** The cursor of a change: `p` and its position. Short, whatever the change holds. */
export const cursorOf = (c: { position: string }): string => `p${c.position}`;

/** The text of a cursor, as a query may hold it: a position, or the base64url of an older one. */
export const CursorText = z
  .string()
  .max(MAX_CURSOR_LENGTH)
  .regex(/^[A-Za-z0-9_-]+$/, "not a cursor this server hands out");

/** A cursor's text as a parameter takes it (zod, before any read): one {@link decodeChangeCursor} reads. */
export const ChangeCursorText = CursorText.refine(
  (text) => decodeChangeCursor(text) !== null,
  "not a cursor this server handed out; start again without it",
);

/** The cursor `text` names, or null when it is none this index hands out (malformed, or holding what no change holds). */
export function decodeChangeCursor(text: string): ChangeCursor | null {
  if (!CursorText.safeParse(text).success) return null;
  const position = POSITION.exec(text)?.[1];
  if (position !== undefined) return { position };
  try {
    const named = NamedChange.safeParse(JSON.parse(Buffer.from(text, "base64url").toString("utf8")));
    return named.success ? { named: named.data } : null;
  } catch {
    return null;
  }
}

/** A change with its position, as the feed of every change reads it. */
export type PlacedChange = FeedChange & { position: string };
type Row = Omit<PlacedChange, "at"> & { at: Date };
const toChange = (r: Row): PlacedChange => Object.assign({}, r, { at: r.at.toISOString() });

const SELECT = `SELECT ch.domain, e.name, ch.kind, ch.claim_key, ch.id, c.label, ch.at, ch.status, ch.verified, ch.reason,
    ch.position::text AS position
  FROM changes ch JOIN entities e ON e.domain = ch.domain
  LEFT JOIN claims c ON c.domain = ch.domain AND c.kind = ch.kind AND c.claim_key = ch.claim_key`;

/** A page of changes and whether more follow it. */
export type ChangePage = { changes: PlacedChange[]; more: boolean };

/**
 * The position `cursor` names in this index: a position up to the last one handed out (its change
 * may have been pruned since), or that of the change an older cursor names; null for any other.
 */
export async function positionOf(db: Queryable, cursor: ChangeCursor): Promise<string | null> {
  if ("position" in cursor) return BigInt(cursor.position) <= BigInt(await lastPosition(db)) ? cursor.position : null;
  const [row] = await db.query<{ position: string }>(
    `SELECT position::text AS position FROM changes
     WHERE at = $1::timestamptz AND domain = $2 AND kind = $3 AND claim_key = $4 AND position IS NOT NULL`,
    cursor.named,
  );
  return row?.position ?? null;
}

/**
 * Up to `limit` changes in the order they were recorded (docs/decisions.md#the-order-of-changes):
 * oldest first after the position `after` (from the first when null), or newest first before
 * `before` (from the latest when null).
 */
export async function changesPage(
  db: Queryable,
  where: { after: string | null } | { before: string | null },
  limit: number,
): Promise<ChangePage> {
  const forward = "after" in where;
  const from = forward ? where.after : where.before;
  const order = forward ? "ASC" : "DESC";
  const after = from === null ? "ch.position IS NOT NULL" : `ch.position ${forward ? ">" : "<"} $2::bigint`;
  const rows = await db.query<Row>(
    `${SELECT} WHERE ${after} ORDER BY ch.position ${order} LIMIT $1`,
    from === null ? [limit + 1] : [limit + 1, from],
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
  at: z.string().meta({
    description:
      "When the check that found it fetched the entity's document (ISO-8601, UTC). The feed is in the order changes were recorded, not by this time.",
  }),
  domain: z.string(),
  name: z.string().nullable().meta({ description: "The entity's name as the index knows it." }),
  kind: z.string().meta({ description: "`entity` for the entity's own status, else the kind of the claim." }),
  claim: z.string().nullable().meta({ description: "The claim's id as published; null for the entity's own status." }),
  label: z.string().nullable().meta({ description: "The claim's label (a property's name, a credential's title)." }),
  status: z.string().nullable().meta({ description: "The entity's status, for a change of the entity's own." }),
  verified: z.boolean().nullable(),
  reason: z.string().nullable().meta({ description: "Why a claim is not verified (docs/decisions.md#reasons)." }),
  url: z.string().meta({ description: "The entity's page." }),
  cursor: z.string().meta({
    description:
      "Opaque and short (the change's position in the order recorded): a page asked with `after` set to it starts just after this change.",
  }),
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
