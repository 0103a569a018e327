import type { NextRequest } from "next/server";
import { NotFetched } from "@/lib/fetch/refusal";
import { parseQuery } from "@/lib/protocol/ids";
import { newWork } from "@/lib/resolver";
import type { ErrorBody } from "@/lib/result/record";
import { admit, refusalOf, type Refusal } from "@/web/admission";
import { app } from "@/web/server";

const NO_STORE = { "Cache-Control": "no-store" };

/** 429 or 503 with Retry-After (docs/decisions.md#outbound-work). */
const refused = (r: Refusal) =>
  Response.json({ error: { code: r.code, message: r.message } } satisfies ErrorBody, {
    status: r.status,
    headers: { ...NO_STORE, "Retry-After": String(r.retryAfterS) },
  });

/** `GET /api/resolve?q=` (docs/decisions.md#interfaces): the SearchResponse, 400 for a bad query, 429 or 503 when refused. */
export async function GET(request: NextRequest) {
  const params = request.nextUrl.searchParams;
  const parsed = parseQuery(params.get("q") ?? "");
  if (!parsed.ok) {
    return Response.json({ error: { code: "invalid_query", message: parsed.message } } satisfies ErrorBody, {
      status: 400,
      headers: NO_STORE,
    });
  }
  const the = app();
  const admission = await admit(the, parsed.query, request.headers, params.get("refresh") === "1");
  if (!admission.ok) return refused(admission.refusal);
  const { refresh } = admission;
  if (refresh.asked && !refresh.granted) {
    return refused({
      status: 429,
      code: "rate_limited",
      message: "Too many refreshes from your address; try again in a minute.",
      retryAfterS: 60,
    });
  }
  const work = newWork();
  // An answer the admission found in the cache is annotated from the index as a lookup's would be.
  let response = admission.known && (await the.resolver.remember(admission.known));
  if (response === null) {
    try {
      response = await the.resolver.resolve(parsed.query, { refresh: refresh.granted, work });
    } catch (err) {
      if (err instanceof NotFetched) return refused(refusalOf(err));
      throw err;
    }
  }
  // Results may be a few minutes old anyway (docs/decisions.md#caching); shared caches may keep them
  // briefly, unless part of the work was declined (docs/decisions.md#outbound-work).
  const store = refresh.granted || work.refused.length > 0;
  return Response.json(response, { headers: store ? NO_STORE : { "Cache-Control": "public, max-age=60, stale-while-revalidate=300" } });
}
