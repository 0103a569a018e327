/**
 * The JSON API's lookup, `GET /api/resolve?q=` (docs/decisions.md#interfaces), as plain data: the Next
 * route (app/api/resolve/route.ts) sends it, and so does the production server without Next
 * (`serveApi`, docs/decisions.md#outbound-work), so that the two never disagree.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "@/lib/log";
import { parseQuery } from "@/lib/protocol/ids";
import { newWork } from "@/lib/resolver";
import type { ErrorBody, SearchResponse } from "@/lib/result/record";
import type { ConfiguredResolver } from "@/lib/setup";
import { answerRefusal, isRefusal, type Refusal } from "@/lib/traffic";
import type { RefusalBody } from "@/lib/traffic/answer";
import { admit, type AdmissionDeps } from "./admission";
import { contentSecurityPolicy, SECURITY_HEADERS } from "./security-headers";

/** A status, the headers of the answer itself (not the security headers) and the JSON body. */
export type ApiAnswer = { status: number; headers: Record<string, string>; body: SearchResponse | ErrorBody | RefusalBody };

/** What the API needs: admission's, the resolver's lookups and the log. */
export type ApiDeps = AdmissionDeps & { resolver: Pick<ConfiguredResolver, "resolve" | "remember">; log: Logger };

const NO_STORE = { "Cache-Control": "no-store" };

/** 429 or 503 with Retry-After (docs/architecture.md#traffic). */
const refused = (refusal: Refusal): ApiAnswer => {
  const answer = answerRefusal(refusal);
  return { status: answer.status, headers: answer.headers, body: answer.body };
};

/** The SearchResponse, 400 for a bad query, 429 or 503 when refused; `forwardedFor` is the request's X-Forwarded-For. */
export async function answerResolve(deps: ApiDeps, params: URLSearchParams, forwardedFor: string | null): Promise<ApiAnswer> {
  const parsed = parseQuery(params.get("q") ?? "");
  if (!parsed.ok) return { status: 400, headers: NO_STORE, body: { error: { code: "invalid_query", message: parsed.message } } };
  const refreshAsked = params.get("refresh") === "1";
  const admission = await admit(deps, parsed.query, forwardedFor, refreshAsked, refreshAsked);
  if (!admission.ok) return refused(admission.refused);
  const { refresh, client } = admission;
  const work = newWork();
  // An answer the admission found in the cache is annotated from the index as a lookup's would be.
  let response = admission.known && (await deps.resolver.remember(admission.known));
  if (response === null) {
    const answer = await deps.resolver.resolve(parsed.query, { refresh: refresh.granted, work, client });
    if (isRefusal(answer)) return refused(answer);
    response = answer;
  }
  // Results may be a few minutes old anyway (docs/decisions.md#caching); shared caches may keep them
  // briefly, unless part of the work was declined (docs/decisions.md#outbound-work).
  const store = refresh.granted || work.refused.length > 0;
  return { status: 200, headers: store ? NO_STORE : { "Cache-Control": "public, max-age=60, stale-while-revalidate=300" }, body: response };
}

/**
 * Answers `GET` or `HEAD /api/resolve?…` on Node's request and response, with the headers proxy.ts
 * gives what Next answers; false for every other request, which is Next's: Next's own handling cost
 * more than the lookup (docs/decisions.md#outbound-work, "The API's lookups without Next").
 */
export function serveApi(deps: ApiDeps, req: IncomingMessage, res: ServerResponse): boolean {
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
  answerResolve(deps, params, Array.isArray(forwarded) ? forwarded.join(", ") : (forwarded ?? null)).then(send, (err: unknown) => {
    deps.log.error(`api: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    send({
      status: 500,
      headers: NO_STORE,
      body: { error: { code: "unavailable", message: "This resolver could not answer; try again shortly." } },
    });
  });
  return true;
}
