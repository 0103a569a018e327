/**
 * Every request's way through the server (docs/architecture.md#one-request-one-decision), in one
 * place, for `npm start` and `npm run dev` alike (web/serve.js hands each request here with Next's
 * handler): its id and log line; `classify`, once; the front door (headers, methods, bodies); the
 * client; the page cache; shedding; then, one per tick of the event loop, the API or the page's
 * admission and results, started here, and Next, run inside the request's context
 * (web/request-context.ts), which the pages read instead of the URL or a header.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { setImmediate, setTimeout } from "node:timers";
import { answerRefusal } from "ident-resolver/traffic";
import { isRefusal, type Refusal } from "ident-resolver/traffic";
import { admitAs, inSearchTurn } from "./admission";
import { rateLimitHeaders } from "./api-headers";
import type { App } from "./app";
import type { Shed } from "./shed";
import { bridge, type NextHandle } from "./bridge";
import { startDelivery } from "./delivery";
import { frontDoor } from "./front";
import { isAnswer } from "./pages";
import type { Page } from "./routes";
import type { RequestContext } from "./request-context";
import { refusalAnswer, type RefusalAnswer } from "./refusal-answer";
import { aroundNext, send, sendText } from "./response";
import { classify, type Route } from "./routes";
import { contentSecurityPolicy, SECURITY_HEADERS } from "./security-headers";

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * Requests enter Next one per tick (iteration) of the event loop, and refusals are written the same way, so a
 * burst is never set up (or refused) in one go while a page the cache could answer at once waits
 * behind it (docs/decisions.md#outbound-work, "In front of Next").
 */
function createEntryQueue() {
  const waiting: (() => void)[] = [];
  const enterNext = () => {
    const next = waiting.shift();
    if (waiting.length > 0) setImmediate(enterNext);
    next?.();
  };
  return (work: () => void) => {
    waiting.push(work);
    if (waiting.length === 1) setImmediate(enterNext);
  };
}

/**
 * A page's refusal, decided before its first byte: the page goes with its status (429 or 503),
 * Retry-After and the client's RateLimit headers, as every refusal does (web/refusal-answer.ts).
 */
async function refusePage(app: App, context: RequestContext, refused: Refusal): Promise<void> {
  context.admission = { ok: false, refused };
  const answer = answerRefusal(refused);
  const limits = await rateLimitHeaders(app.resolver.traffic.windows, context.client).catch(() => ({}));
  context.head = { status: answer.status, headers: Object.assign({}, answer.headers, limits) };
}

/**
 * A search of the index (docs/decisions.md#search), before Next renders its page: the client's
 * `searches`, then the search itself in its turn at the engine (`searchesAtOnce`,
 * `searchesInProgress`); the page shows what it found, or why not, with the status decided here.
 */
async function searchIndex(app: App, context: RequestContext, page: Page & { kind: "index-search" }): Promise<void> {
  const admitted = await admitAs(app, context.route.row.admission, context.client, null);
  if (!admitted.ok) return refusePage(app, context, admitted.refused);
  const store = await app.resolver.store;
  if (!store) return;
  const found = await inSearchTurn(app, context.client, () => store.search(page.text, page.cursor)).catch((err: unknown) => {
    app.log.warn(`store: a search failed: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  });
  if (isRefusal(found)) return refusePage(app, context, found);
  context.searched = found;
}

/**
 * The `searches` of a feed or a sitemap (its row's admission, web/routes.ts), taken before Next runs
 * its handler: the refusal, answered as every refusal is (web/refusal-answer.ts), or null.
 */
async function admitIndexRead(app: App, context: RequestContext): Promise<RefusalAnswer | null> {
  const admitted = await admitAs(app, context.route.row.admission, context.client, null);
  if (admitted.ok) return null;
  const limits = await rateLimitHeaders(app.resolver.traffic.windows, context.client).catch(() => ({}));
  return refusalAnswer(context.route.row.profile, admitted.refused, limits);
}

/**
 * What a page is sent with and what it is given before Next renders it, as its row's admission says
 * (web/routes.ts): a lookup or the check admitted and an answer page's results started now; a search
 * of the index run; or the refusal's status and headers.
 */
async function preparePage(app: App, context: RequestContext, page: Page): Promise<void> {
  const { admission } = context.route.row;
  if (admission === null) return;
  if (page.kind === "index-search") return searchIndex(app, context, page);
  if (!isAnswer(page) && page.kind !== "check") throw new Error(`server: ${page.kind} has no query to admit`);
  // The check is always a fresh check (docs/publishing.md#check): its row asks a refresh, and its limit.
  const refresh = context.route.url.searchParams.get("refresh") === "1";
  const admitted = await admitAs(app, admission, context.client, { query: page.query, refresh, refreshRequired: false });
  if (!admitted.ok) return refusePage(app, context, admitted.refused);
  if (admitted.lookup === null) throw new Error(`server: ${page.kind}'s row admits no lookup`);
  context.admission = admitted.lookup;
  // docs/decisions.md#cold-pages: a cold page's fetches start now, before Next reaches the page.
  if (isAnswer(page)) context.delivery = startDelivery(app.resolver, page, admitted.lookup, context.userAgent);
}

/** What every step of the way needs: the app, Next's handler, the entry queue and the store of request contexts. */
type Way = {
  app: App;
  next: NextHandle;
  dev: boolean;
  /** Runs `work` on a tick of its own, in the order asked (createEntryQueue). */
  enterInOrder(work: () => void): void;
  requests: ReturnType<typeof bridge>["requests"];
};

function logRequest(app: App, req: IncomingMessage, res: ServerResponse, id: string, started: number) {
  const path = (req.url ?? "").split("?")[0];
  app.log.info("request", {
    request_id: id,
    method: req.method,
    path,
    status: res.statusCode,
    ms: Math.round(performance.now() - started),
  });
}

/** Next renders the page, inside the request's context: its head as decided, the read pages without the runtime, compressed. */
function render(way: Way, req: IncomingMessage, res: ServerResponse, context: RequestContext) {
  const { app } = way;
  const { route } = context;
  const page = route.target.kind === "page" ? route.target.page : null;
  const run = async () => {
    if (res.destroyed) return;
    if (!page && route.row.admission === "search") {
      const refused = await admitIndexRead(app, context);
      if (refused) return send(req, res, refused);
    }
    if (page) {
      await preparePage(app, context, page);
      // Next reads a page's nonce from the request's policy (docs/decisions.md#security-headers).
      const csp = contentSecurityPolicy(context.nonce, way.dev);
      req.headers["content-security-policy"] = csp;
      res.setHeader("Content-Security-Policy", csp);
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    }
    if (res.destroyed) return;
    aroundNext(req, res, { head: context.head, readPage: route.row.scriptFree });
    await way.next(req, res);
  };
  way.enterInOrder(() =>
    way.requests.run(context, () => {
      run().catch((err: unknown) => {
        app.log.error(`server: ${err instanceof Error ? err.message : String(err)}`);
        if (!res.headersSent) sendText(req, res, 500, "This resolver could not answer; try again shortly.");
        else res.destroy();
      });
    }),
  );
}

/** The request's context: its route, and its client worked out once from the socket and X-Forwarded-For. */
function contextOf(app: App, req: IncomingMessage, id: string, route: Route): RequestContext {
  // docs/decisions.md#caching: X-Forwarded-For always ends with the socket's address, which a client cannot choose.
  const prior = req.headers["x-forwarded-for"];
  const forwardedFor = [Array.isArray(prior) ? prior.join(", ") : prior, req.socket.remoteAddress].filter(Boolean).join(", ");
  req.headers["x-forwarded-for"] = forwardedFor;
  return {
    id,
    route,
    client: app.clientOf(forwardedFor),
    userAgent: req.headers["user-agent"] ?? null,
    nonce: randomBytes(16).toString("base64"),
    admission: null,
    delivery: null,
    head: { status: route.row.status, headers: {} },
    probe: null,
    read: null,
  };
}

/** A refusal of the limits or of shedding: a client past its own limit waits for its answer (a loop then costs it time); others are answered in turn. */
function answerRefused(way: Way, refused: Shed) {
  if (refused.delayMs > 0) setTimeout(refused.write, refused.delayMs).unref();
  else way.enterInOrder(refused.write);
}

/** The row's handler (web/routes.ts): the API, the badge and the re-check without Next, the rest rendered by Next. */
function handle(way: Way, req: IncomingMessage, res: ServerResponse, context: RequestContext) {
  const { app, requests } = way;
  const { route } = context;
  const inContext = (work: () => void) => way.enterInOrder(() => requests.run(context, work));
  const handler = route.row.handler;
  if (handler === "web/api.ts") return inContext(() => app.api.serve(req, res, route));
  // docs/api.md#badges: drawn from the index.
  if (handler === "web/badge.ts") return inContext(() => app.badges.serve(req, res, route));
  // docs/publishing.md#re-check-now.
  if (handler === "web/recheck.ts") return inContext(() => app.recheck(req, res));
  // docs/notices.md: webhooks and the WebSub hub.
  if (handler === "web/notices.ts") return inContext(() => app.notices.serve(req, res, route));
  render(way, req, res, context);
}

/** Shedding counts the request in (health and readiness never: docs/deploying.md#health), then its handler. */
function countedIn(way: Way, req: IncomingMessage, res: ServerResponse, context: RequestContext) {
  const { route } = context;
  const refused = route.row.is === "operator" ? null : way.app.shed(req, res, route, context.client);
  if (refused) return answerRefused(way, refused);
  handle(way, req, res, context);
}

/**
 * The per-client limits the route names (docs/architecture.md#traffic), before the request is counted
 * in: a refusal waiting its second holds none of the instance's requests in progress. A limiter's
 * fault lets the request on.
 */
function limitsThenOn(way: Way, req: IncomingMessage, res: ServerResponse, context: RequestContext) {
  const { app } = way;
  const { route } = context;
  if (route.limits.length === 0) return countedIn(way, req, res, context);
  app.limited(req, res, route, context.client).then(
    (limited) => {
      if (res.destroyed) return;
      if (limited) answerRefused(way, limited);
      else countedIn(way, req, res, context);
    },
    (error: unknown) => {
      app.log.error(`limits: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.destroyed) countedIn(way, req, res, context);
    },
  );
}

/** One request's way (docs/architecture.md#routes): its row, the front door, its client, the page cache, then the rest. */
function serve(way: Way, req: IncomingMessage, res: ServerResponse, id: string) {
  const { app } = way;
  const target = req.url ?? "";
  // Only origin-form targets ("/path") are routes; `OPTIONS *` and absolute-form targets are answered here.
  if (!target.startsWith("/")) {
    const asterisk = req.method === "OPTIONS" && target === "*";
    return asterisk ? sendText(req, res, 204, null, { Allow: "GET, HEAD" }) : sendText(req, res, 400, "Bad request target");
  }
  const route = classify(req.method ?? "GET", target);
  const context = contextOf(app, req, id, route);
  way.requests.run(context, () => {
    // The security headers on every answer; a malformed path, a method or a body the route does not take are answered there.
    if (frontDoor(req, res, route, app.apiPolicy)) return;
    const onward = () => limitsThenOn(way, req, res, context);
    // Warm entity and lookup pages come from the page cache (web/page-cache.ts); the rest go on.
    app.pages.serve(req, res, route, onward).catch((error: unknown) => {
      // A fault of the page cache never leaves a request hanging: it goes on, or it is closed.
      app.log.error(`page cache: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) onward();
      else res.destroy();
    });
  });
}

/** The server's handler of every request, given Next's (web/serve.js); `dev` runs Next's development server inside it. */
export function createRequestHandler(app: App, next: NextHandle, options: { dev: boolean }) {
  const way: Way = { app, next, dev: options.dev, enterInOrder: createEntryQueue(), requests: bridge().requests };
  return (req: IncomingMessage, res: ServerResponse) => {
    // docs/deploying.md#logs: each request has an id (a well-formed X-Request-Id from the proxy in
    // front, else a new one), sent back and written with every log line made while it runs.
    const offered = req.headers["x-request-id"];
    const id = typeof offered === "string" && REQUEST_ID.test(offered) ? offered : randomUUID();
    req.headers["x-request-id"] = id;
    res.setHeader("x-request-id", id);
    const started = performance.now();
    res.once("finish", () => logRequest(app, req, res, id, started));
    serve(way, req, res, id);
  };
}
