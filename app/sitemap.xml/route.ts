import { app } from "@/web/app";
import { sitemapIndexXml } from "@/web/crawlers";
import { indexUnavailable, readInTurn } from "@/web/index-reads";

// Read at each request: the public origin is configured at run time, the index changes.
export const dynamic = "force-dynamic";

/** `GET /sitemap.xml` (docs/decisions.md#crawlers): the sitemap index, from the index; never fetches. */
export async function GET() {
  // docs/decisions.md#crawlers: the index counts its rows, as a search does, and counts as one (its row, web/routes.ts).
  const store = await app().resolver.store;
  if (!store) return indexUnavailable("no index");
  const body = await readInTurn(app(), () => sitemapIndexXml(store.db, app().config.publicUrl)).catch(() => null);
  if (body instanceof Response) return body;
  if (body === null) return indexUnavailable("unreadable");
  return new Response(body, { headers: { "Content-Type": "application/xml; charset=utf-8", "Cache-Control": "public, max-age=3600" } });
}
