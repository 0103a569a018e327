/**
 * The index's entity pages for crawlers (docs/decisions.md#crawlers): every accepted entity, in
 * sitemaps of at most {@link SITEMAP_URLS} pages each, read from the store a chunk at a time so that
 * memory does not grow with the index. Written as sitemaps.org 0.9 XML by `web/crawlers.ts`.
 */
import type { Queryable } from "./db.ts";

/** The most `<url>` entries one sitemap may hold (sitemaps.org). */
export const SITEMAP_URLS = 50_000;
/** Rows read from the store at a time: what one slow reader holds (about 110 KB). */
const CHUNK = 500;

export type SitemapEntry = { domain: string; lastChecked: Date };

/** How many sitemaps the index needs: at least one, empty when the index is. */
export async function sitemapCount(db: Queryable, perSitemap = SITEMAP_URLS): Promise<number> {
  const [row] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM entities WHERE status = 'accepted'");
  return Math.max(1, Math.ceil((row?.n ?? 0) / perSitemap));
}

/**
 * The entries of sitemap `n` (from 0): the accepted entities from the `n × perSitemap`-th in domain
 * order, `perSitemap` of them at most. None when `n` is past the last.
 */
export async function* sitemapEntries(db: Queryable, n: number, perSitemap = SITEMAP_URLS, chunk = CHUNK): AsyncGenerator<SitemapEntry> {
  const [first] = await db.query<{ domain: string }>(
    "SELECT domain FROM entities WHERE status = 'accepted' ORDER BY domain OFFSET $1 LIMIT 1",
    [n * perSitemap],
  );
  if (!first) return;
  let from = first.domain;
  let inclusive = true;
  for (let left = perSitemap; left > 0;) {
    // Keyset: each chunk starts after the last domain of the one before (a plain bound, so the
    // engine starts its scan of the primary key there).
    const rows = await db.query<{ domain: string; last_checked_at: Date | string }>(
      `SELECT domain, last_checked_at FROM entities
       WHERE status = 'accepted' AND domain ${inclusive ? ">=" : ">"} $1
       ORDER BY domain LIMIT $2`,
      [from, Math.min(chunk, left)],
    );
    for (const row of rows) yield { domain: row.domain, lastChecked: new Date(row.last_checked_at) };
    const last = rows.at(-1);
    if (!last || rows.length < Math.min(chunk, left)) return;
    left -= rows.length;
    from = last.domain;
    inclusive = false;
  }
}
