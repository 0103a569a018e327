/**
 * A route handler's read of the index (the feeds, the sitemaps: docs/decisions.md#crawlers), run in
 * its turn at the engine (`searchesAtOnce`, `searchesInProgress`, docs/architecture.md#traffic) for
 * the request being answered. Its client is the one the server decided (web/server.ts), and its
 * `searches` were taken by the server before Next ran the handler (its row's admission,
 * web/routes.ts): the handler decides no limit. When the engine is too busy, its answer is the
 * refusal every route answers with (web/refusal-answer.ts).
 */
import type { ConfiguredResolver } from "ident-resolver/setup";
import { isRefusal } from "ident-resolver/traffic";
import { currentClient, inSearchTurn, type AdmissionDeps } from "./admission";
import { rateLimitHeaders } from "./api-headers";
import { refusalAnswer, unavailableAnswer, type Unavailable } from "./refusal-answer";
import { requestContext } from "./request-context";

export type IndexReadDeps = AdmissionDeps & { resolver: Pick<ConfiguredResolver, "traffic" | "metrics"> };

/** The index failing, as the route being answered says it (web/refusal-answer.ts: 503, in its row's form). */
export function indexUnavailable(why: Unavailable): Response {
  const answer = unavailableAnswer(requestContext()?.route.row.profile ?? "file", why);
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/** What `read` gave, in its turn; or the refusal as the route's answer. */
export async function readInTurn<T>(deps: IndexReadDeps, read: () => Promise<T>): Promise<T | Response> {
  const client = currentClient(deps);
  const done = await inSearchTurn(deps, client, read);
  if (!isRefusal(done)) return done;
  const limits = await rateLimitHeaders(deps.resolver.traffic.windows, client).catch(() => ({}));
  const answer = refusalAnswer(requestContext()?.route.row.profile ?? "file", done, limits);
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}
