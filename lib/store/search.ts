/**
 * Search over the index (docs/decisions.md#search): words as prefixes, case and accents ignored, a
 * small typo forgiven through the trigrams of the words of names. Ranked: an exact domain or
 * network_id, then names with every word, then names with every word but for a typo, then the rest;
 * among equals, accepted entities with more verified claims first. Never fetches anything.
 */
import { z } from "zod";
import { isDomain, parseNetworkId } from "../protocol/ids.ts";
import type { Db, Queryable, Tx } from "./db.ts";
import { foldedTerms, prefixQuery, typoQuery } from "./search-text.ts";

export const INDEX_SEARCH_SCHEMA = "ident-resolver/index-search@1";
export const SEARCH_PAGE_SIZE = 20;
export const MAX_SEARCH_LENGTH = 200;
/** Pages beyond this are not served: a search is for finding, not for walking the whole index. */
const MAX_OFFSET = 1000;
/** Words a query may use; the rest are ignored. */
const MAX_TERMS = 8;
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
  /** Present when a search of very common words stopped before it filled its page (docs/decisions.md#search-at-size). */
  cut_short: z.literal(true).optional(),
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

/** The terms of a search (its words as the index stores words, lib/store/search-text.ts): the first {@link MAX_TERMS} distinct ones. */
export function searchTerms(text: string): string[] {
  return [...new Set(foldedTerms(text))].slice(0, MAX_TERMS);
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
 * One page of a search, in one transaction; on a PostgreSQL server under {@link SEARCH_TIMEOUT_MS}
 * (PGlite runs one statement at a time, in a process of its own, and has no timer to stop one).
 */
export async function searchIndex(db: Db, text: string, offset = 0, opts: { walkLimit?: number } = {}): Promise<IndexSearch> {
  const walkLimit = opts.walkLimit ?? WALK_LIMIT;
  // One transaction for the whole search on both engines: on the embedded one, a begin and a commit
  // are each a round trip to its process, and a search asks for up to four kinds of hit.
  return db.transaction(async (tx) => {
    if (db.engine === "postgres") await tx.query(`SET LOCAL statement_timeout = ${SEARCH_TIMEOUT_MS}`);
    return searchOn(asDb(tx, db), text, offset, { walkLimit, entities: await entityCount(db, tx) });
  });
}

/** A transaction seen as a database whose transactions are that one (neither engine nests them). */
const asDb = (tx: Tx, db: Db): Db => ({
  engine: db.engine,
  query: (sql, params) => tx.query(sql, params),
  transaction: (body) => body(tx),
  close: async () => undefined,
});

/** What every kind of hit of one search is read with: the walk's limit, and how many entities the index holds. */
type Reading = { walkLimit: number; entities: number };

async function searchOn(db: Db, text: string, offset: number, reading: Reading): Promise<IndexSearch> {
  const terms = searchTerms(text);
  // Hits up to the end of this page, and one more to know whether another page follows.
  const want = offset + SEARCH_PAGE_SIZE + 1;
  const hits = await exactHits(db, text);
  const seen = new Set(hits.map((h) => h.domain));
  const take = (rows: HitRow[]) => {
    for (const r of rows) {
      if (seen.has(r.domain) || hits.length >= want) continue;
      hits.push(r);
      seen.add(r.domain);
    }
  };
  let cut = false;
  const domain = text.toLowerCase();
  if (isDomain(domain)) {
    // docs/decisions.md#search-at-size: a domain is looked for as a domain, never as words.
    take(await domainsAbove(db, domain));
    take(await domainsBelow(db, domain, want));
  } else if (terms.length > 0) {
    // Names with every word; then everything else with every word (the names' hits are among the
    // first of those, so as many more are read and they are skipped).
    const named = await ranked(db, "search_names", prefixQuery(terms), want, reading);
    cut ||= named.cut;
    take(named.rows);
    const any = hits.length < want ? await ranked(db, "search", prefixQuery(terms), want + named.rows.length, reading) : null;
    cut ||= any?.cut ?? false;
    take(any?.rows ?? []);
    // docs/decisions.md#search: typos are looked for only when nothing has every word.
    if (named.rows.length === 0 && any?.rows.length === 0) {
      const typos = await db.transaction(async (tx) => typoQuery(await lookAlikes(tx, terms)));
      if (typos.length > 0) {
        const alike = await ranked(db, "search_names", typos, want, reading);
        cut ||= alike.cut;
        take(alike.rows);
      }
    }
  }
  const more = hits.length > offset + SEARCH_PAGE_SIZE && offset + SEARCH_PAGE_SIZE <= MAX_OFFSET;
  return {
    schema: INDEX_SEARCH_SCHEMA,
    query: text,
    results: hits.slice(offset, offset + SEARCH_PAGE_SIZE).map(toHit),
    next_cursor: more ? encodeCursor(offset + SEARCH_PAGE_SIZE) : null,
    ...(cut ? { cut_short: true } : {}),
  };
}

/** The entities at the domains above `domain` (`blog.alice.example` → `alice.example`), nearest first. */
async function domainsAbove(db: Queryable, domain: string): Promise<HitRow[]> {
  const labels = domain.split(".");
  const above = labels.slice(1, -1).map((_, i) => labels.slice(i + 1).join("."));
  if (above.length === 0) return [];
  const rows = await db.query<HitRow>(`SELECT ${HIT_COLUMNS} FROM entities WHERE domain = ANY($1::text[])`, [above]);
  return above.flatMap((d) => rows.filter((r) => r.domain === d));
}

/**
 * The first `limit` entities at domains below `domain`, in the order of their reversed names (the
 * zone's own names first, each followed by those below it): a range of the index of reversed
 * domains (migration 12), read as far as the page and no further, however many there are.
 */
async function domainsBelow(db: Queryable, domain: string, limit: number): Promise<HitRow[]> {
  // "elpmaxe.ecila." up to "elpmaxe.ecila/": every reversed name that starts with the first.
  const from = `${[...domain].reverse().join("")}.`;
  const to = `${from.slice(0, -1)}/`;
  const reversed = `(reverse(domain) COLLATE "C")`;
  return db.query<HitRow>(
    `SELECT ${HIT_COLUMNS} FROM entities WHERE ${reversed} >= $1 AND ${reversed} < $2 ORDER BY ${reversed} LIMIT $3`,
    [from, to, limit],
  );
}

const HIT_COLUMNS = "domain, network_id, entity_type, name, description, status, verified, unverified, last_checked_at";
/** The order of hits of one kind: accepted entities first, then more verified claims, then the domain (index entities_by_rank). */
const RANK = "(status = 'accepted') DESC, verified DESC, domain";

/** An exact domain, or the domain of an exact network_id. */
async function exactHits(db: Queryable, text: string): Promise<HitRow[]> {
  const domains = [text.toLowerCase(), parseNetworkId(text)?.toLowerCase() ?? ""];
  const rows = await db.query<HitRow>(`SELECT ${HIT_COLUMNS} FROM entities WHERE domain = ANY($1::text[])`, [domains]);
  return domains.flatMap((d) => rows.filter((r) => r.domain === d));
}

/** Rows a walk in rank order reads at most before it stops and says so (docs/decisions.md#search-at-size). */
export const WALK_LIMIT = 200_000;

type Ranked = { rows: HitRow[]; cut: boolean };
/** How the engine is told to read for one statement: set_config local to the transaction. */
const READ_BY = {
  rank: "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('enable_indexscan', 'on', true)",
  text: "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'on', true), set_config('enable_indexscan', 'off', true)",
  any: "SELECT set_config('enable_seqscan', 'on', true), set_config('enable_bitmapscan', 'on', true), set_config('enable_indexscan', 'on', true)",
};

/**
 * The first `limit` entities whose `column` matches every one of `parts` (tsqueries), in rank order,
 * at a cost that follows `limit` rather than the matches (docs/decisions.md#search-at-size). With m
 * matches among n entities, walking the entities in rank order until `limit` match reads about
 * limit × n / m rows; reading the matches through the text index reads each part's posting list
 * (a prefix's, whole) and then the m rows. The engine's statistics estimate both (`EXPLAIN`, no row
 * read). Cheaper to walk: walk, as far as 4 × the estimate says is needed. Cheaper to read, or the
 * walk came up short: read the matches, up to 4 × √(limit × n); more than that after all, and the
 * walk goes on, to `walkLimit` rows at most, and stops there (`cut`).
 */
async function ranked(db: Db, column: "search" | "search_names", parts: string[], limit: number, reading: Reading): Promise<Ranked> {
  const { walkLimit, entities: n } = reading;
  const tsquery = parts.join(" & ");
  return db.transaction(async (tx) => {
    const estimate = async (q: string) => {
      const [plan] = await tx.query<{ "QUERY PLAN": unknown }>(
        `EXPLAIN (FORMAT JSON) SELECT 1 FROM entities WHERE ${column} @@ $1::tsquery`,
        [q],
      );
      return planRows(plan?.["QUERY PLAN"]);
    };
    const estimated = await estimate(tsquery);
    // Each part's posting list is read whole when there are several (one part: they are the matches).
    // One after another: one transaction is one connection, which runs one statement at a time.
    let postings = 0;
    if (parts.length > 1) for (const part of parts) postings += await estimate(part);
    // At least `limit`: more matches than that and a walk that ends short has met its end.
    const few = Math.max(limit, 1000, Math.ceil(Math.sqrt(limit * n)));
    // The engine is told which index to read only where its planner may choose otherwise: a walk of
    // more than a tenth of the index, a read of matches the estimate said were many. Elsewhere its
    // choice is the one wanted, and a statement fewer counts (a round trip to the embedded engine).
    let told = false;
    const tell = async (how: string) => {
      await tx.query(how);
      told = true;
    };
    const walk = async (rows: number, force = rows > n / 10): Promise<HitRow[]> => {
      if (force) await tell(READ_BY.rank);
      // No ORDER BY outside: the filter keeps the index's order, and one there would make the
      // planner sort every row of the walk before taking the first (121 ms for 100k, 0.3 without).
      return tx.query<HitRow>(
        `SELECT ${HIT_COLUMNS} FROM (SELECT * FROM entities ORDER BY ${RANK} LIMIT $2) e WHERE ${column} @@ $1::tsquery LIMIT $3`,
        [tsquery, rows, limit],
      );
    };
    const out = await (async (): Promise<Ranked> => {
      // Costs in rows: a posting is a third of a row read (measured at 1M entities).
      const walkFirst = (limit * n) / Math.max(estimated, 1) < estimated + postings / 3;
      if (walkFirst) {
        const rows = await walk(Math.min(walkLimit, Math.ceil((4 * limit * n) / estimated)));
        if (rows.length >= limit) return { rows, cut: false };
        await tell(READ_BY.text);
      }
      const cap = 4 * few;
      const found = await tx.query<HitRow & { matched: number }>(
        `WITH m AS MATERIALIZED (SELECT ${HIT_COLUMNS} FROM entities WHERE ${column} @@ $1::tsquery LIMIT $2)
         SELECT *, (SELECT count(*) FROM m)::int AS matched FROM m ORDER BY ${RANK} LIMIT $3`,
        [tsquery, cap + 1, limit],
      );
      if ((found[0]?.matched ?? 0) <= cap) return { rows: found, cut: false };
      const rows = await walk(walkLimit, true);
      return { rows, cut: rows.length < limit };
    })();
    // The search's transaction goes on: the next statement is the planner's own choice again.
    if (told) await tx.query(READ_BY.any);
    return out;
  });
}

/** The rows a plan (EXPLAIN's JSON, parsed or not) says it returns. */
function planRows(plan: unknown): number {
  const parsed: unknown = typeof plan === "string" ? JSON.parse(plan) : plan;
  const rows = Array.isArray(parsed) ? (parsed[0] as { Plan?: { "Plan Rows"?: unknown } } | undefined)?.Plan?.["Plan Rows"] : undefined;
  return typeof rows === "number" ? rows : 0;
}

/** Entities in the index as the engine last counted them (its statistics), read again after a minute. */
const counted = new WeakMap<Db, { n: number; until: number }>();
async function entityCount(db: Db, tx: Queryable): Promise<number> {
  const kept = counted.get(db);
  if (kept && kept.until > Date.now()) return kept.n;
  const [row] = await tx.query<{ n: number }>("SELECT greatest(reltuples, 0)::float8 AS n FROM pg_class WHERE relname = 'entities'");
  counted.set(db, { n: row?.n ?? 0, until: Date.now() + 60_000 });
  return row?.n ?? 0;
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

/** Each typed word with the words of names most like it (docs/decisions.md#search). */
async function lookAlikes(tx: Queryable, terms: string[]): Promise<{ word: string; alike: string[] }[]> {
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
    [terms, TYPO_CANDIDATES],
  );
  await tx.query("SELECT set_config('enable_seqscan', 'on', true)");
  const groups = terms.map((word, i) => ({ word, alike: like.filter((r) => r.n === i + 1).map((r) => r.word) }));
  return groups.some((g) => g.alike.length > 0) ? groups : [];
}
