/**
 * Search over the index (docs/decisions.md#search): words as prefixes, case and accents ignored, a
 * small typo forgiven through the trigrams of the words of names. Ranked: an exact domain or
 * network_id, then names with every word, then names with every word but for a typo, then the rest;
 * among equals, accepted entities with more verified claims first. Never fetches anything.
 */
import { z } from "zod";
import { parseNetworkId } from "../protocol/ids";
import type { Db, Queryable } from "./db";

export const INDEX_SEARCH_SCHEMA = "ident-resolver/index-search@1";
export const SEARCH_PAGE_SIZE = 20;
export const MAX_SEARCH_LENGTH = 200;
/** Pages beyond this are not served: a search is for finding, not for walking the whole index. */
const MAX_OFFSET = 1000;
/** Words a query may use; the rest are ignored. */
const MAX_WORDS = 8;
/** How alike a word of a name must be to a typed word (pg_trgm similarity): "guld" finds "guild" (0.375). */
const TYPO_THRESHOLD = 0.3;
/** Words of names tried for each typed word. */
const TYPO_CANDIDATES = 3;

/** One entity found by a search (`/api/search`, docs/api.md). */
export const IndexHit = z.object({
  domain: z.string(),
  network_id: z.string().optional(),
  entity_type: z.string().optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  status: z.string(),
  verified: z.number().int(),
  unverified: z.number().int(),
  last_checked_at: z.string(),
  url: z.string(),
});
export type IndexHit = z.infer<typeof IndexHit>;

/** One page of a search: its hits, and the cursor of the next page (null on the last). */
export const IndexSearch = z.object({
  schema: z.literal(INDEX_SEARCH_SCHEMA),
  query: z.string(),
  results: z.array(IndexHit),
  next_cursor: z.string().nullable(),
});
export type IndexSearch = z.infer<typeof IndexSearch>;

export type SearchTextParse = { ok: true; text: string } | { ok: false; message: string };

/** A search text as typed: trimmed, 1 to 200 characters, no control characters. */
export function parseSearchText(raw: string): SearchTextParse {
  const text = raw.trim();
  if (text === "") return { ok: false, message: "The search is empty" };
  if ([...text].length > MAX_SEARCH_LENGTH) return { ok: false, message: `The search is longer than ${MAX_SEARCH_LENGTH} characters` };
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\u0000-\u001f\u007f-\u009f]/.test(text)) return { ok: false, message: "The search contains control characters" };
  return { ok: true, text };
}

/** The words of a search as the index stores words: lower case, accents removed, letters and digits only. */
export function searchWords(text: string): string[] {
  const folded = text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
  return [...new Set(folded.match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, MAX_WORDS);
}

/** A cursor is the offset of the next page, opaque to clients. */
export function encodeCursor(offset: number): string {
  return Buffer.from(`o${offset}`).toString("base64url");
}

export function decodeCursor(cursor: string | null): number | null {
  if (cursor === null || cursor === "") return 0;
  if (!/^[A-Za-z0-9_-]{1,16}$/.test(cursor)) return null;
  const m = /^o(\d{1,5})$/.exec(Buffer.from(cursor, "base64url").toString("latin1"));
  const offset = m ? Number(m[1]) : NaN;
  return Number.isInteger(offset) && offset % SEARCH_PAGE_SIZE === 0 && offset <= MAX_OFFSET ? offset : null;
}

type HitRow = {
  domain: string;
  network_id: string | null;
  entity_type: string | null;
  name: string | null;
  description: string | null;
  status: string;
  verified: number;
  unverified: number;
  last_checked_at: Date;
};

/** One page of hits for `text` (already parsed) from `offset`. */
/** The longest one search may run on a PostgreSQL server (docs/decisions.md#search): one search cannot hold the database. */
export const SEARCH_TIMEOUT_MS = 2000;

/**
 * One page of a search: on a PostgreSQL server in one transaction under {@link SEARCH_TIMEOUT_MS}
 * (PGlite runs one statement at a time, in a process of its own, and has no timer to stop one).
 */
export async function searchIndex(db: Db, text: string, offset = 0): Promise<IndexSearch> {
  if (db.engine !== "postgres") return searchOn(db, text, offset);
  return db.transaction(async (tx) => {
    await tx.query(`SET LOCAL statement_timeout = ${SEARCH_TIMEOUT_MS}`);
    return searchOn(asDb(tx, db), text, offset);
  });
}

/** A transaction seen as a database whose transactions are that one (PostgreSQL nests none). */
const asDb = (tx: Queryable, db: Db): Db => ({
  engine: db.engine,
  query: (sql, params) => tx.query(sql, params),
  transaction: (body) => body(tx),
  close: async () => undefined,
});

async function searchOn(db: Db, text: string, offset: number): Promise<IndexSearch> {
  const words = searchWords(text);
  const exact = text.toLowerCase();
  const networkDomain = parseNetworkId(text)?.toLowerCase() ?? null;
  // Every word must match as a prefix; each is letters and digits only, so the tsquery text cannot
  // carry an operator. `:*A` matches in the name, the domain or the network_id only.
  const tsquery = words.map((w) => `${w}:*`).join(" & ");
  const inName = words.map((w) => `${w}:*A`).join(" & ");
  // Each tsquery is written into the statement as to_tsquery($n), so the planner sees it and uses
  // the text index; a part with no words is left out.
  const page = (q: Queryable, typoQuery: string) => {
    const params: unknown[] = [exact, networkDomain ?? "", offset, SEARCH_PAGE_SIZE + 1];
    const tsq = (text: string) => {
      params.push(text);
      return `to_tsquery('simple', $${params.length})`;
    };
    const all = tsquery ? tsq(tsquery) : null;
    const named = tsquery ? tsq(inName) : null;
    const typo = typoQuery ? tsq(typoQuery) : null;
    return q.query<HitRow>(
      `SELECT domain, network_id, entity_type, name, description, status, verified, unverified, last_checked_at
       FROM entities
       WHERE domain = $1 OR domain = $2 ${all ? `OR search @@ ${all}` : ""} ${typo ? `OR search @@ ${typo}` : ""}
       ORDER BY
         CASE WHEN domain = $1 OR domain = $2 THEN 0
              ${named ? `WHEN search @@ ${named} THEN 1` : ""}
              ${typo ? `WHEN search @@ ${typo} THEN 2` : ""}
              ELSE 3 END,
         (status = 'accepted') DESC,
         verified DESC,
         domain
       OFFSET $3 LIMIT $4`,
      params,
    );
  };
  // Typos are looked for only when nothing has every word: then each word may also be one of the
  // words of names most like it (docs/decisions.md#search). On a first page, an empty answer says
  // so; further pages ask. The trigram threshold is set for one transaction only.
  const withTypos = () => db.transaction(async (tx) => page(tx, await typoTsquery(tx, words)));
  let rows: HitRow[];
  if (tsquery === "") rows = await page(db, "");
  else if (offset === 0) {
    rows = await page(db, "");
    if (rows.length === 0) rows = await withTypos();
  } else rows = (await db.transaction((tx) => anyMatch(tx, tsquery))) ? await page(db, "") : await withTypos();
  const more = rows.length > SEARCH_PAGE_SIZE && offset + SEARCH_PAGE_SIZE <= MAX_OFFSET;
  return {
    schema: INDEX_SEARCH_SCHEMA,
    query: text,
    results: rows.slice(0, SEARCH_PAGE_SIZE).map(toHit),
    next_cursor: more ? encodeCursor(offset + SEARCH_PAGE_SIZE) : null,
  };
}

function toHit(r: HitRow): IndexHit {
  return {
    domain: r.domain,
    ...(r.network_id !== null ? { network_id: r.network_id } : {}),
    ...(r.entity_type !== null ? { entity_type: r.entity_type } : {}),
    ...(r.name !== null ? { name: r.name } : {}),
    ...(r.description !== null ? { description: r.description } : {}),
    status: r.status,
    verified: r.verified,
    unverified: r.unverified,
    last_checked_at: r.last_checked_at.toISOString(),
    url: `/entity/${r.domain}`,
  };
}

/** A credential the index knows a domain issues, with its holder. */
export type IssuedCredential = {
  id: string | null;
  title: string | null;
  holder: { domain: string; name: string | null; status: string };
  verified: boolean;
  reason: string | null;
  last_checked_at: string;
};

/** The credentials the index knows to be issued by `issuer` (docs/decisions.md#search), verified first. */
export async function issuedBy(db: Queryable, issuer: string, limit = 500): Promise<IssuedCredential[]> {
  const rows = await db.query<{
    id: string | null;
    label: string | null;
    domain: string;
    name: string | null;
    status: string;
    verified: boolean;
    reason: string | null;
    last_checked_at: Date;
  }>(
    `SELECT c.id, c.label, c.domain, e.name, e.status, c.verified, c.reason, c.last_checked_at
     FROM claims c JOIN entities e ON e.domain = c.domain
     WHERE c.issuer = $1 AND c.kind = 'credentials' AND c.present
     ORDER BY c.verified DESC, c.domain, c.id LIMIT $2`,
    [issuer.toLowerCase(), limit],
  );
  return rows.map((r) => ({
    id: r.id,
    title: r.label,
    holder: { domain: r.domain, name: r.name, status: r.status },
    verified: r.verified,
    reason: r.reason,
    last_checked_at: r.last_checked_at.toISOString(),
  }));
}

/**
 * A tsquery in which each typed word matches in a name as typed (a prefix) or as one of the words of
 * names most like it; "" when no word has a likely meaning.
 */
async function typoTsquery(tx: Queryable, words: string[]): Promise<string> {
  // Through the trigram index, always: for a long word the planner would rather compute the
  // similarity of every word of the index (docs/decisions.md#search).
  await tx.query("SELECT set_config('pg_trgm.similarity_threshold', $1, true), set_config('enable_seqscan', 'off', true)", [
    String(TYPO_THRESHOLD),
  ]);
  // Every typed word's look-alikes in one statement, most alike first.
  const like = await tx.query<{ n: number; word: string }>(
    `SELECT typed.n::int AS n, alike.word
     FROM unnest($1::text[]) WITH ORDINALITY AS typed (word, n)
     CROSS JOIN LATERAL (
       SELECT word, similarity(word, typed.word) AS sim FROM search_words
       WHERE word % typed.word AND word <> typed.word ORDER BY sim DESC, word LIMIT $2
     ) AS alike
     WHERE length(typed.word) >= 3
     ORDER BY typed.n, alike.sim DESC, alike.word`,
    [words, TYPO_CANDIDATES],
  );
  await tx.query("SELECT set_config('enable_seqscan', 'on', true)");
  let corrected = false;
  const groups = words.map((word, i) => {
    // Words of the index are letters and digits; anything else is not put in a query.
    const alternatives = like.filter((r) => r.n === i + 1 && /^[\p{L}\p{N}]+$/u.test(r.word)).map((r) => r.word);
    if (alternatives.length > 0) corrected = true;
    return `(${[`${word}:*A`, ...alternatives.map((w) => `${w}:A`)].join(" | ")})`;
  });
  return corrected ? groups.join(" & ") : "";
}

/**
 * Whether any entity has every word, through the text index: for a first row the planner would
 * rather scan the table, which is slow when there is none.
 */
async function anyMatch(tx: Queryable, tsquery: string): Promise<boolean> {
  await tx.query("SELECT set_config('enable_seqscan', 'off', true)");
  const [row] = await tx.query<{ found: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM entities WHERE search @@ to_tsquery('simple', $1)) AS found",
    [tsquery],
  );
  await tx.query("SELECT set_config('enable_seqscan', 'on', true)");
  return row?.found === true;
}
