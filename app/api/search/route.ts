import type { ErrorBody } from "@/lib/result/record";
import { parseSearchText } from "@/lib/store/search";
import { searchRefused } from "@/web/admission";
import { app } from "@/web/app";

const NO_STORE = { "Cache-Control": "no-store" };

const error = (status: number, code: ErrorBody["error"]["code"], message: string) =>
  Response.json({ error: { code, message } } satisfies ErrorBody, { status, headers: NO_STORE });

/**
 * `GET /api/search?q=&cursor=` (docs/decisions.md#search): one page of ranked hits from the index,
 * with the cursor of the next. Never fetches anything.
 */
export async function GET(request: Request) {
  const params = new URL(request.url).searchParams;
  const text = parseSearchText(params.get("q") ?? "");
  if (!text.ok) return error(400, "invalid_query", text.message);
  // docs/architecture.md#traffic: `searches`, with the pages' searches.
  const refused = await searchRefused(app(), request);
  if (refused) return refused;
  const store = await app().resolver.store;
  if (!store) return error(503, "unavailable", "The index is not available on this server; lookups are answered without it.");
  const page = await store.search(text.text, params.get("cursor")).catch((err: unknown) => {
    app().log.warn(`store: a search failed: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  });
  if (page === undefined) return error(503, "unavailable", "The index could not be read just now; try again shortly.");
  if (page === null) return error(400, "invalid_query", "The cursor is not one this server handed out; search again without it.");
  return Response.json(page, { headers: NO_STORE });
}
