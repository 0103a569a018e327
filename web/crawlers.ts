/**
 * What crawlers read (docs/decisions.md#crawlers): robots.txt, and the sitemaps of the index's
 * entity pages as sitemaps.org 0.9 XML, written as a stream. Framework-free: the routes under `app/`
 * hand these a store and the public origin.
 */
import type { Queryable, SitemapEntry } from "ident-resolver/store";
import { sitemapAfter, sitemapChunks, sitemapCount, SITEMAP_URLS } from "ident-resolver/store";
import { xml } from "./xml";

/** Pages for people and crawlers; everything else is a tool, an answer of the moment, or a form. */
export function robotsTxt(publicUrl: string): string {
  return [
    "User-agent: *",
    "Allow: /entity/",
    "Allow: /issuer/",
    "Disallow: /search",
    "Disallow: /check",
    "Disallow: /api/",
    "Disallow: /recheck",
    "",
    `Sitemap: ${new URL("/sitemap.xml", publicUrl).href}`,
    "",
  ].join("\n");
}

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';
const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"';

const counted = new WeakMap<Queryable, Map<number, { count: number; until: number }>>();
/** How many sitemaps the index needs, counted at most once a minute per store (a count reads every row). */
export async function cachedSitemapCount(db: Queryable, perSitemap = SITEMAP_URLS, now = Date.now()): Promise<number> {
  const byStore = counted.get(db) ?? new Map<number, { count: number; until: number }>();
  counted.set(db, byStore);
  const kept = byStore.get(perSitemap);
  if (kept && now < kept.until) return kept.count;
  const count = await sitemapCount(db, perSitemap);
  byStore.set(perSitemap, { count, until: now + 60_000 });
  return count;
}

/** The sitemap index: one `/sitemaps/{n}.xml` for every {@link SITEMAP_URLS} accepted entities. */
export async function sitemapIndexXml(db: Queryable, publicUrl: string, perSitemap = SITEMAP_URLS): Promise<string> {
  const count = await cachedSitemapCount(db, perSitemap);
  const entries = Array.from(
    { length: count },
    (_, n) => `<sitemap><loc>${xml(new URL(`/sitemaps/${n}.xml`, publicUrl).href)}</loc></sitemap>`,
  );
  return `${XML_HEAD}<sitemapindex ${NS}>\n${entries.join("\n")}\n</sitemapindex>\n`;
}

/** `/sitemaps/{n}.xml` as `n` in `file`, or null when `file` is not one. */
export function sitemapNumber(file: string): number | null {
  const m = /^(0|[1-9]\d{0,6})\.xml$/.exec(file);
  return m ? Number(m[1]) : null;
}

/** Where each sitemap begins, as the last read of the one before ended: kept a minute, as the count is. */
const begins = new WeakMap<Queryable, Map<string, { after: string | null; until: number }>>();

/** Where sitemap `n` begins (lib/store/sitemap.ts `sitemapAfter`), counted on from the nearest one remembered before it. */
async function cachedSitemapAfter(db: Queryable, n: number, perSitemap: number, now: number): Promise<string | null | undefined> {
  const remembered = begins.get(db);
  let from: { n: number; after: string | null } = { n: 0, after: null };
  for (let m = n; m > 0 && remembered; m--) {
    const kept = remembered.get(`${perSitemap}:${m}`);
    if (kept && now < kept.until) {
      from = { n: m, after: kept.after };
      break;
    }
  }
  return from.n === n ? from.after : sitemapAfter(db, n, perSitemap, from);
}

/** Remembers that sitemap `n` begins after `after`, for a minute. */
function rememberBegin(db: Queryable, n: number, perSitemap: number, after: string, now: number): void {
  const remembered = begins.get(db) ?? new Map<string, { after: string | null; until: number }>();
  begins.set(db, remembered);
  for (const [key, kept] of remembered) if (kept.until <= now) remembered.delete(key);
  remembered.set(`${perSitemap}:${n}`, { after, until: now + 60_000 });
}

/**
 * Sitemap `n`, written as the store hands its rows over (a chunk at a time): the entity pages, with
 * `<lastmod>` their last check. Null when `n` is past the last sitemap (a 404). Read to its end, it
 * says where sitemap n + 1 begins, so a crawler reading them in turn never counts its way there.
 */
export async function sitemapStream(
  db: Queryable,
  publicUrl: string,
  n: number,
  perSitemap = SITEMAP_URLS,
  chunk?: number,
): Promise<ReadableStream<Uint8Array> | null> {
  // Past the last sitemap: 404 without reading the index up to it.
  if (n > 0 && n >= (await cachedSitemapCount(db, perSitemap))) return null;
  const after = await cachedSitemapAfter(db, n, perSitemap, Date.now());
  if (after === undefined) return null;
  const chunks = sitemapChunks(db, after, perSitemap, chunk);
  const first = await chunks.next();
  // Sitemap 0 exists even for an empty index: the index always names it.
  if (first.done && n > 0) return null;
  const encoder = new TextEncoder();
  // A domain of the index is already a URL's host-name form: the pages' common start is made once,
  // not a URL parsed for each of 50,000 entries.
  const pages = xml(new URL("/entity/", publicUrl).href);
  const urls = (rows: SitemapEntry[]) =>
    rows.map((e) => `<url><loc>${pages}${xml(e.domain)}</loc><lastmod>${e.lastmod}</lastmod></url>\n`).join("");
  let pending: SitemapEntry[] | null = first.done ? null : first.value;
  let written = 0;
  let last: string | null = null;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(`${XML_HEAD}<urlset ${NS}>\n`));
    },
    // Pulled as the client reads: a slow reader holds one chunk of rows, not the sitemap.
    async pull(controller) {
      const rows = pending ?? (await chunks.next()).value ?? null;
      pending = null;
      if (!rows) {
        if (written === perSitemap && last !== null) rememberBegin(db, n + 1, perSitemap, last, Date.now());
        controller.enqueue(encoder.encode("</urlset>\n"));
        controller.close();
        return;
      }
      written += rows.length;
      last = rows.at(-1)?.domain ?? last;
      controller.enqueue(encoder.encode(urls(rows)));
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}
