import type { NextRequest } from "next/server";
import type { ErrorBody } from "@/lib/result/record";
import { app } from "@/web/server";

/** `GET /api/resolve?q=` (docs/decisions.md#interfaces): the SearchResponse, or 400 for a bad query. */
export async function GET(request: NextRequest) {
  const params = request.nextUrl.searchParams;
  const refresh = params.get("refresh") === "1";
  const { resolver, refresh: limit } = app();
  if (refresh) {
    const decision = limit(request.headers);
    if (!decision.ok) {
      return Response.json(
        { error: { code: "rate_limited", message: `Too many refreshes; try again in ${decision.retryAfterS} s` } },
        { status: 429, headers: { "Retry-After": String(decision.retryAfterS), "Cache-Control": "no-store" } },
      );
    }
  }
  const out = await resolver.search(params.get("q") ?? "", { refresh });
  if (!out.ok) return Response.json({ error: out.error } satisfies ErrorBody, { status: 400, headers: { "Cache-Control": "no-store" } });
  // Results may be a few minutes old anyway (docs/decisions.md#caching); shared caches may keep them briefly.
  return Response.json(out.response, {
    headers: { "Cache-Control": refresh ? "no-store" : "public, max-age=60, stale-while-revalidate=300" },
  });
}
