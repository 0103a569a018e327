import { app } from "@/web/app";
import { sitemapNumber, sitemapStream } from "@/web/crawlers";
import { indexUnavailable, readInTurn } from "@/web/index-reads";

const NOT_FOUND = { status: 404, headers: { "Cache-Control": "no-store" } };

/** `GET /sitemaps/{n}.xml` (docs/decisions.md#crawlers): up to 50,000 entity pages, streamed from the index. */
export async function GET(request: Request, ctx: { params: Promise<{ file: string }> }) {
  const n = sitemapNumber((await ctx.params).file);
  if (n === null) return new Response("No such sitemap.\n", NOT_FOUND);
  // docs/decisions.md#crawlers: a sitemap reads the index as a search does, and counts as one (its row, web/routes.ts).
  const store = await app().resolver.store;
  if (!store) return indexUnavailable("no index");
  const stream = await readInTurn(app(), () => sitemapStream(store.db, app().config.publicUrl, n)).catch(() => undefined);
  if (stream instanceof Response) return stream;
  if (stream === undefined) return indexUnavailable("unreadable");
  if (stream === null) return new Response("No such sitemap.\n", NOT_FOUND);
  return new Response(stream, { headers: { "Content-Type": "application/xml; charset=utf-8", "Cache-Control": "public, max-age=3600" } });
}
