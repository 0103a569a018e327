/**
 * Search over the index (docs/decisions.md#search): words as prefixes, case and accents ignored, a
 * small typo forgiven by trigrams of the names. Ranked: an exact domain or network_id, then names
 * with every word, then names alike but for a typo, then the rest; among equals, accepted entities
 * with more verified claims first. Never fetches anything.
 */
import { parseNetworkId } from "../protocol/ids";
import type { Db, Queryable } from "./db";

export const INDEX_SEARCH_SCHEMA = "ident-resolver/index-search@1";
export const SEARCH_PAGE_SIZE = 20;
export const MAX_SEARCH_LENGTH = 200;
/** Pages beyond this are not served: a search is for finding, not for walking the whole index. */
const MAX_OFFSET = 1000;
/** Words a query may use; the rest are ignored. */
const MAX_WORDS = 8;
/** How alike a name must be to a typed word (pg_trgm's word similarity): one wrong letter in five passes. */
const TYPO_THRESHOLD = 0.45;

export type IndexHit = {
  domain: string;
  network_id?: string;
  entity_type?: string;
  name?: string;
  description?: string;
  status: string;
  verified: number;
  unverified: number;
  last_checked_at: string;
  url: string;
};

export type IndexSearch = { schema: typeof INDEX_SEARCH_SCHEMA; query: string; results: IndexHit[]; next_cursor: string | null };

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
export async function searchIndex(db: Db, text: string, offset = 0): Promise<IndexSearch> {
  const words = searchWords(text);
  const exact = text.toLowerCase();
  const networkDomain = parseNetworkId(text)?.toLowerCase() ?? null;
  // Every word but the last must be whole or a prefix; each is letters and digits only, so the
  // tsquery text cannot carry an operator.
  const tsquery = words.map((w) => `${w}:*`).join(" & ");
  const plain = words.join(" ");
  // The typo threshold is set for this transaction only.
  const rows = await db.transaction(async (tx) => {
    await tx.query(`SELECT set_config('pg_trgm.word_similarity_threshold', $1, true)`, [String(TYPO_THRESHOLD)]);
    return tx.query<HitRow>(
      `WITH q AS (SELECT CASE WHEN $1 = '' THEN NULL ELSE to_tsquery('simple', $1) END AS tsq)
       SELECT domain, network_id, entity_type, name, description, status, verified, unverified, last_checked_at
       FROM entities, q
       WHERE domain = $3 OR domain = $4
          OR (q.tsq IS NOT NULL AND search @@ q.tsq)
          OR ($2 <> '' AND length($2) >= 3 AND $2 <% names_plain)
       ORDER BY
         CASE WHEN domain = $3 OR domain = $4 THEN 0
              WHEN q.tsq IS NOT NULL AND to_tsvector('simple', names_plain) @@ q.tsq THEN 1
              WHEN $2 <> '' AND $2 <% names_plain THEN 2
              ELSE 3 END,
         (status = 'accepted') DESC,
         verified DESC,
         CASE WHEN q.tsq IS NULL THEN 0 ELSE ts_rank(search, q.tsq) END DESC,
         word_similarity($2, names_plain) DESC,
         domain
       OFFSET $5 LIMIT $6`,
      [tsquery, plain, exact, networkDomain ?? "", offset, SEARCH_PAGE_SIZE + 1],
    );
  });
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
