/**
 * What crawlers read (docs/decisions.md#crawlers): robots.txt, and the sitemaps of the index's
 * entity pages as sitemaps.org 0.9 XML, written as a stream. Framework-free: the routes under `app/`
 * hand these a store and the public origin.
 */
import type { Queryable } from "ident-resolver/store";
import { sitemapCount, sitemapEntries, SITEMAP_URLS } from "ident-resolver/store";
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

/**
 * Sitemap `n`, written as the store hands its rows over (a chunk at a time): the entity pages, with
 * `<lastmod>` their last check. Null when `n` is past the last sitemap (a 404).
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
  const entries = sitemapEntries(db, n, perSitemap, chunk);
  const first = await entries.next();
  // Sitemap 0 exists even for an empty index: the index always names it.
  if (first.done && n > 0) return null;
  const encoder = new TextEncoder();
  const url = (e: { domain: string; lastChecked: Date }) =>
    `<url><loc>${xml(new URL(`/entity/${e.domain}`, publicUrl).href)}</loc><lastmod>${e.lastChecked.toISOString()}</lastmod></url>\n`;
  let pending: { domain: string; lastChecked: Date } | null = first.done ? null : first.value;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(`${XML_HEAD}<urlset ${NS}>\n`));
    },
    // Pulled as the client reads: a slow reader holds one chunk of rows, not the sitemap.
    async pull(controller) {
      let text = "";
      if (pending) text += url(pending);
      pending = null;
      for (let i = 0; i < 500; i++) {
        const next = await entries.next();
        if (next.done) {
          controller.enqueue(encoder.encode(`${text}</urlset>\n`));
          controller.close();
          return;
        }
        text += url(next.value);
      }
      controller.enqueue(encoder.encode(text));
    },
    async cancel() {
      await entries.return(undefined);
    },
  });
}
