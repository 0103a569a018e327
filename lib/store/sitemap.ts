/**
 * The index's entity pages for crawlers (docs/decisions.md#crawlers): every accepted entity, in
 * sitemaps of at most {@link SITEMAP_URLS} pages each, read from the store a chunk at a time so that
 * memory does not grow with the index. Written as sitemaps.org 0.9 XML by `web/crawlers.ts`.
 */
import type { Queryable } from "./db.ts";

/** The most `<url>` entries one sitemap may hold (sitemaps.org). */
export const SITEMAP_URLS = 50_000;
/** Rows read from the store at a time: what one slow reader holds (about 0.5 MB). 500 were 100 statements a sitemap. */
const CHUNK = 2000;

/** An entity page of a sitemap: its domain, and its last check as the sitemap writes it (ISO 8601, UTC, milliseconds). */
export type SitemapEntry = { domain: string; lastmod: string };

/** How many sitemaps the index needs: at least one, empty when the index is. */
export async function sitemapCount(db: Queryable, perSitemap = SITEMAP_URLS): Promise<number> {
  const [row] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM entities WHERE status = 'accepted'");
  return Math.max(1, Math.ceil((row?.n ?? 0) / perSitemap));
}

/**
 * Where sitemap `n` (from 0) begins: after the domain this answers (null: at the first accepted
 * entity; undefined: `n` is past the last). Counted on from a sitemap whose beginning is remembered (`nearest`)
 * (else the first): `OFFSET` reads every index entry it skips, so a reader of sitemap after sitemap
 * that hands each one's end on (web/crawlers.ts) skips none.
 */
export async function sitemapAfter(
  db: Queryable,
  n: number,
  perSitemap = SITEMAP_URLS,
  nearest: { n: number; after: string | null } = { n: 0, after: null },
): Promise<string | null | undefined> {
  if (n === 0) return null;
  const from = nearest.n < n ? nearest : { n: 0, after: null };
  // The last domain of sitemap n − 1.
  const skip = (n - from.n) * perSitemap - 1;
  const [row] = await db.query<{ domain: string }>(
    `SELECT domain FROM entities WHERE status = 'accepted'${from.after === null ? "" : " AND domain > $2"} ORDER BY domain OFFSET $1 LIMIT 1`,
    from.after === null ? [skip] : [skip, from.after],
  );
  return row?.domain;
}

/**
 * The entries of the sitemap that begins after `after` (null: at the first), in domain order, a
 * chunk of rows at a time, `perSitemap` of them at most.
 */
export async function* sitemapChunks(
  db: Queryable,
  after: string | null,
  perSitemap = SITEMAP_URLS,
  chunk = CHUNK,
): AsyncGenerator<SitemapEntry[]> {
  let from = after;
  for (let left = perSitemap; left > 0;) {
    const size = Math.min(chunk, left);
    // Keyset: each chunk starts after the last domain of the one before (a plain bound, so the
    // engine starts its scan of the primary key there). The time as text from the engine: a Date
    // made and written again for each of 50,000 rows was a tenth of a sitemap's time.
    const rows = await db.query<SitemapEntry>(
      `SELECT domain, to_char(last_checked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS lastmod FROM entities
       WHERE status = 'accepted'${from === null ? "" : " AND domain > $2"} ORDER BY domain LIMIT $1`,
      from === null ? [size] : [size, from],
    );
    if (rows.length > 0) yield rows;
    const last = rows.at(-1);
    if (!last || rows.length < size) return;
    left -= rows.length;
    from = last.domain;
  }
}
