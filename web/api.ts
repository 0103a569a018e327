/**
 * The JSON API's lookup, `GET /api/resolve?q=` (docs/decisions.md#interfaces), as plain data: the Next
 * route (app/api/resolve/route.ts) sends it, and so does the production server without Next
 * (`serveApi`, docs/decisions.md#outbound-work), so that the two never disagree.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { NotFetched } from "@/lib/fetch/refusal";
import { parseQuery } from "@/lib/protocol/ids";
import { newWork } from "@/lib/resolver";
import type { ErrorBody, SearchResponse } from "@/lib/result/record";
import { extend } from "@/lib/objects";
import { admit, refusalOf, type Refusal } from "./admission";
import { contentSecurityPolicy, SECURITY_HEADERS } from "./security-headers";
import type { App } from "./server";

/** A status, the headers of the answer itself (not the security headers) and the JSON body. */
export type ApiAnswer = { status: number; headers: Record<string, string>; body: SearchResponse | ErrorBody };

const NO_STORE = { "Cache-Control": "no-store" };

/** 429 or 503 with Retry-After (docs/decisions.md#outbound-work). */
const refused = (r: Refusal): ApiAnswer => ({
  status: r.status,
  headers: extend(NO_STORE, { "Retry-After": String(r.retryAfterS) }),
  body: { error: { code: r.code, message: r.message } },
});

/** The SearchResponse, 400 for a bad query, 429 or 503 when refused; `forwardedFor` is the request's X-Forwarded-For. */
export async function answerResolve(the: App, params: URLSearchParams, forwardedFor: string | null): Promise<ApiAnswer> {
  const parsed = parseQuery(params.get("q") ?? "");
  if (!parsed.ok) return { status: 400, headers: NO_STORE, body: { error: { code: "invalid_query", message: parsed.message } } };
  const admission = await admit(the, parsed.query, forwardedFor, params.get("refresh") === "1");
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
  return { status: 200, headers: store ? NO_STORE : { "Cache-Control": "public, max-age=60, stale-while-revalidate=300" }, body: response };
}

/**
 * Answers `GET` or `HEAD /api/resolve?…` on Node's request and response, with the headers proxy.ts
 * gives what Next answers; false for every other request, which is Next's. Next's own handling of a
 * request cost the page thread about 8 ms, more than the lookup's own work, and a burst of
 * lookups kept `/` waiting behind it (docs/decisions.md#outbound-work).
 */
export function serveApi(the: App, req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  const target = req.url ?? "";
  const at = target.indexOf("?");
  if ((at < 0 ? target : target.slice(0, at)) !== "/api/resolve") return false;
  const params = new URLSearchParams(at < 0 ? "" : target.slice(at + 1));
  const forwarded = req.headers["x-forwarded-for"];
  const send = (answer: ApiAnswer) => {
    if (res.destroyed) return;
    const body = Buffer.from(JSON.stringify(answer.body));
    res.writeHead(
      answer.status,
      Object.assign({}, answer.headers, {
        "Content-Type": "application/json",
        "Content-Length": String(body.length),
        "Content-Security-Policy": contentSecurityPolicy(randomBytes(16).toString("base64")),
        ...SECURITY_HEADERS,
      }),
    );
    res.end(req.method === "HEAD" ? undefined : body);
  };
  answerResolve(the, params, Array.isArray(forwarded) ? forwarded.join(", ") : (forwarded ?? null)).then(send, (err: unknown) => {
    the.log.error(`api: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    send({
      status: 500,
      headers: NO_STORE,
      body: { error: { code: "unavailable", message: "This resolver could not answer; try again shortly." } },
    });
  });
  return true;
}
