import { app } from "@/web/app";
import { sitemapIndexXml } from "@/web/crawlers";
import { readInTurn } from "@/web/index-reads";

// Read at each request: the public origin is configured at run time, the index changes.
export const dynamic = "force-dynamic";

const UNAVAILABLE = { status: 503, headers: { "Cache-Control": "no-store", "Retry-After": "60" } };

/** `GET /sitemap.xml` (docs/decisions.md#crawlers): the sitemap index, from the index; never fetches. */
export async function GET() {
  // docs/decisions.md#crawlers: the index counts its rows, as a search does, and counts as one (its row, web/routes.ts).
  const store = await app().resolver.store;
  if (!store) return new Response("The index is not available on this server.\n", UNAVAILABLE);
  const body = await readInTurn(app(), () => sitemapIndexXml(store.db, app().config.publicUrl)).catch(() => null);
  if (body instanceof Response) return body;
  if (body === null) return new Response("The index could not be read just now; try again shortly.\n", UNAVAILABLE);
  return new Response(body, { headers: { "Content-Type": "application/xml; charset=utf-8", "Cache-Control": "public, max-age=3600" } });
}
