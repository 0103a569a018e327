/**
 * The JSON API (docs/api.md): `/api/resolve`, `/api/search`, `/api/entity/{domain}/history` and
 * `/api/openapi.json`, answered as plain data by one function, so that the production server (which
 * answers them before Next, docs/decisions.md#outbound-work) and the Next routes (under `next dev`)
 * never disagree. Every answer carries CORS and the client's rate-limit headers; a 200 carries an
 * `ETag`, and `If-None-Match` with it is answered 304 (web/api-headers.ts).
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { gzipSync } from "node:zlib";
import { LRUCache } from "lru-cache";
import type { Logger } from "ident-resolver/setup";
import { parseQuery, type Query } from "ident-resolver";
import { newWork } from "ident-resolver";
import type { ErrorBody } from "ident-resolver";
import type { ConfiguredResolver } from "ident-resolver/setup";
import { parseSearchText } from "ident-resolver/store";
import { isRefusal, type Refusal } from "ident-resolver/traffic";
import { admitAs, currentClient, inSearchTurn, type AdmissionDeps, type LookupAsked, type LookupTaken } from "./admission";
import { changesAnswer, CHANGES_DEFAULT, decodeChangeCursor } from "ident-resolver/store";
import { ChangesParams, checkParams, HistoryParams, ResolveParams, SearchParams } from "./api-schemas";
import { CORS_HEADERS, etagOf, notModified, PREFLIGHT_HEADERS, rateLimitHeaders, rateLimitPolicy, sharedCacheMayKeep } from "./api-headers";
import { MEMORY_CAPS } from "./memory-caps";
import { openApiDocument } from "./openapi";
import { acceptsGzip } from "./response";
import { send } from "./response";
import { probeOnce } from "./probe";
import { refusalAnswer, unavailableAnswer, type RefusalAnswer, type Unavailable } from "./refusal-answer";
import { apiRouteOf, ROUTES, type Route, type RouteKind, type RouteRow } from "./routes";
import { contentSecurityPolicy } from "./security-headers";
import { createVersions } from "./versions";

/** A request to the API, whoever received it. */
/** A request of the API: `client` is its client, decided once by the server (web/admission.ts `currentClient`). */
export type ApiRequest = { method: string; path: string; params: URLSearchParams; client: string; header(name: string): string | null };

/** What is sent: status, headers (security headers aside) and the body (null for HEAD and 304). */
export type ApiReply = { status: number; headers: Record<string, string>; body: Buffer | null };

/** What the API needs: admission's, the resolver and the log. */
export type ApiDeps = AdmissionDeps & {
  resolver: Pick<ConfiguredResolver, "resolve" | "remember" | "probe" | "traffic" | "metrics" | "store" | "generation">;
  log: Logger;
  /** The rate-limit policy (web/api-headers.ts), the same on every answer; made from the settings when not given. */
  policy?: Readonly<Record<string, string>>;
};

export type Api = {
  answer(request: ApiRequest): Promise<ApiReply>;
  /** Answers a request the server classified as the API's (web/routes.ts) on Node's request and response. */
  serve(req: IncomingMessage, res: ServerResponse, route: Route): void;
};

/** An answer before the common headers: its JSON (or bytes already made) and its own headers. */
type Answer = { status: number; headers: Record<string, string>; json: unknown; bytes?: Buffer };

const NO_STORE = { "Cache-Control": "no-store" };
/** A lookup may be a few minutes old anyway (docs/decisions.md#caching). */
const LOOKUP_FRESH = { "Cache-Control": "public, max-age=60, stale-while-revalidate=300" };
/** docs/api.md#search: an instance answers the same search from memory for this long. */
export const SEARCH_FRESH_S = 10;
const HISTORY_FRESH = { "Cache-Control": "public, max-age=60" };
/** docs/api.md#changes: a page of changes is as fresh as the index's latest for a few seconds. */
const CHANGES_FRESH = { "Cache-Control": "public, max-age=10" };
const DESCRIPTION_FRESH = { "Cache-Control": "public, max-age=3600" };

const error = (status: number, code: ErrorBody["error"]["code"], message: string, headers: Record<string, string> = {}): Answer => ({
  status,
  headers: Object.assign({}, NO_STORE, headers),
  json: { error: { code, message } } satisfies ErrorBody,
});

/** 429 or 503 with Retry-After (docs/architecture.md#traffic), made as every refusal is (web/refusal-answer.ts); the client's limits are added below. */
const refused = (refusal: Refusal): Answer => made(refusalAnswer("api", refusal, {}));

const made = (answer: RefusalAnswer): Answer => ({
  status: answer.status,
  headers: answer.headers,
  json: null,
  bytes: Buffer.from(answer.body),
});

/** The index failing: 503 `unavailable`, as every route says it (web/refusal-answer.ts). */
const unavailable = (why: Unavailable): Answer =>
  made(
    unavailableAnswer(
      "api",
      why,
      why === "no index" ? "The index is not available on this server; lookups are answered without it." : undefined,
    ),
  );
/** docs/api.md#changes: a cursor well formed that names no position of this index. */
const NOT_A_POSITION =
  "The cursor is not one this server handed out: it is past the newest change, or of the older form and names a change the index no longer holds. Start again without it.";
/** Answers shorter than this are sent as they are: compressing them saves less than it costs. */
const GZIP_FROM = 1024;
/** Tags and compressed copies of the answers kept (warm lookups, searches), made once each. */
const tags = new WeakMap<Buffer, string>();
const compressed = new WeakMap<Buffer, Buffer>();
function tagOf(bytes: Buffer): string {
  let tag = tags.get(bytes);
  if (tag === undefined) tags.set(bytes, (tag = etagOf(bytes)));
  return tag;
}
function gzipped(bytes: Buffer): Buffer {
  let gz = compressed.get(bytes);
  if (gz === undefined) compressed.set(bytes, (gz = gzipSync(bytes)));
  return gz;
}

/** The parameters of `names` that were given, a missing `q` as the empty text (refused by its parser in its words). */
function paramsOf(params: URLSearchParams, names: string[]): Record<string, string> {
  const values: Record<string, string> = { q: "" };
  for (const name of names) {
    const value = params.get(name);
    if (value !== null) values[name] = value;
  }
  return values;
}

/** What the API keeps between requests: its warm answers, the versions they were made from, the searches answered and running. */
type ApiState = {
  deps: ApiDeps;
  /** Warm lookups, kept as sent while the cache's answer for them is unchanged (docs/api.md#speed). */
  warm: LRUCache<string, { version: string; bytes: Buffer; cacheControl: string }>;
  /** The version of the cache's answer to a lookup's query (web/versions.ts). */
  versionOf(q: string): Promise<string | null>;
  /** Searches answered lately, for {@link SEARCH_FRESH_S}. */
  searches: LRUCache<string, Buffer>;
  /** Searches running now, by their text and cursor. */
  running: Map<string, Promise<Searched>>;
  /** The OpenAPI description, made on first use. */
  description: Buffer | null;
  policy: Readonly<Record<string, string>>;
};

/** A search's bytes, or why there are none: refused, failed (undefined), a cursor not handed out (null). */
type Searched = Buffer | Refusal | undefined | null;

export function createApi(deps: ApiDeps): Api {
  const { resolver } = deps;
  const versions = createVersions<string>({
    version: async (q) => {
      const parsed = parseQuery(q);
      if (!parsed.ok) return null;
      // Asked once for the request: admission takes this answer (web/probe.ts).
      const probed = await probeOnce(resolver, parsed.query);
      return probed.state === "cached" ? { text: JSON.stringify(probed.response), until: probed.until } : null;
    },
    generation: () => resolver.generation(),
  });
  const api: ApiState = {
    deps,
    warm: new LRUCache({ maxSize: MEMORY_CAPS.apiLookups.cap, sizeCalculation: (w) => w.bytes.length + 256 }),
    versionOf: (q) => versions(q, q),
    searches: new LRUCache({ maxSize: MEMORY_CAPS.apiSearches.cap, sizeCalculation: (b) => b.length + 256, ttl: SEARCH_FRESH_S * 1000 }),
    running: new Map(),
    description: null,
    policy: deps.policy ?? rateLimitPolicy(resolver.traffic.settings),
  };
  return { answer: (request) => answer(api, request), serve: (req, res, route) => serve(api, req, res, route) };
}

/** A lookup's input: its text, its query, the refresh asked, and the version of the cache's answer its kept copy is checked against. */
type Lookup = { q: string; query: Query; refreshAsked: boolean; version: string | null };

/** `GET /api/resolve?q=&refresh=` (docs/api.md#resolve): a lookup, answered from the cache or fetched. */
const RESOLVE: ApiRoute<Lookup> = {
  read(request) {
    const checked = checkParams(ResolveParams, paramsOf(request.params, ["q", "refresh"]));
    if (!checked.ok) return error(400, "invalid_query", checked.message);
    const q = checked.value.q.trim();
    const parsed = parseQuery(q);
    if (!parsed.ok) return error(400, "invalid_query", parsed.message);
    return { input: { q, query: parsed.query, refreshAsked: checked.value.refresh === "1", version: null } };
  },
  // A warm answer, kept as sent while the cache's answer is unchanged: it spends nothing. Otherwise
  // the lookup goes on with the version its answer may be kept under.
  async kept(api, lookup) {
    if (lookup.refreshAsked) return { input: lookup };
    const version = await api.versionOf(lookup.q);
    const hit = version === null ? undefined : api.warm.get(lookup.q);
    if (hit && hit.version === version) {
      return { kept: { status: 200, headers: { "Cache-Control": hit.cacheControl }, json: null, bytes: hit.bytes } };
    }
    return { input: Object.assign({}, lookup, { version }) };
  },
  lookup: ({ query, refreshAsked }) => ({ query, refresh: refreshAsked, refreshRequired: refreshAsked }),
  async answer(api, { q, query, version }, admission, client) {
    const { resolver } = api.deps;
    if (admission === null) throw new Error("api: a lookup's row admits no lookup");
    const { refresh } = admission;
    const work = newWork();
    // An answer the admission found in the cache is annotated from the index as a lookup's would be.
    let response = admission.cached && (await resolver.remember(admission.cached, client));
    const fromCache = response !== null;
    if (response === null) {
      const answer = await resolver.resolve(query, { refresh: refresh.granted, work, client });
      if (isRefusal(answer)) return refused(answer);
      response = answer;
    }
    // Shared caches may keep it briefly, unless part of the work was declined (docs/decisions.md#outbound-work).
    const headers = refresh.granted || work.refused.length > 0 ? NO_STORE : LOOKUP_FRESH;
    const bytes = Buffer.from(JSON.stringify(response));
    // Kept only when it was made from the cache alone, and nothing changed while it was made.
    if (fromCache && version !== null && headers === LOOKUP_FRESH && (await api.versionOf(q)) === version) {
      api.warm.set(q, { version, bytes, cacheControl: headers["Cache-Control"] });
    }
    return { status: 200, headers, json: null, bytes };
  },
};

/** `GET /api/search?q=&cursor=` (docs/api.md#search): a page of the index's search; its row's `searches` counts one answered from memory too. */
const SEARCH: ApiRoute<{ text: string; cursor: string | null }> = {
  read(request) {
    const checked = checkParams(SearchParams, paramsOf(request.params, ["q", "cursor"]));
    if (!checked.ok) return error(400, "invalid_query", checked.message);
    const text = parseSearchText(checked.value.q);
    if (!text.ok) return error(400, "invalid_query", text.message);
    return { input: { text: text.text, cursor: checked.value.cursor ?? null } };
  },
  async answer(api, { text, cursor }, _admission, client) {
    const { deps, searches, running } = api;
    const { resolver, log } = deps;
    const key = `${text}\n${cursor ?? ""}`;
    const shared = { "Cache-Control": `public, max-age=${SEARCH_FRESH_S}` };
    const recent = searches.get(key);
    if (recent) return { status: 200, headers: shared, json: null, bytes: recent };
    const store = await resolver.store;
    if (!store) return unavailable("no index");
    // The same search already running is joined, not run again: it holds one turn of the engine
    // (docs/architecture.md#traffic, `searchesAtOnce`) however many ask it at once. A refusal is the
    // asker's own: one that joined a refused search asks for itself.
    const ask = (): Promise<Searched> =>
      inSearchTurn(deps, client, () => store.search(text, cursor)).then(
        (page) => (page === null || isRefusal(page) ? page : Buffer.from(JSON.stringify(page))),
        (err: unknown) => {
          log.warn(`store: a search failed: ${err instanceof Error ? err.message : String(err)}`);
          return undefined;
        },
      );
    const joined = running.get(key);
    const first = joined ?? runOnce(running, key, ask);
    let found = await first;
    if (joined && !(found instanceof Buffer)) found = await runOnce(running, key, ask);
    if (isRefusal(found)) return refused(found);
    if (found === undefined) return unavailable("unreadable");
    if (found === null) return error(400, "invalid_query", "The cursor is not one this server handed out; search again without it.");
    searches.set(key, found);
    return { status: 200, headers: shared, json: null, bytes: found };
  },
};

/** Runs `search`, known as running under `key` until it ends. */
function runOnce(running: Map<string, Promise<Searched>>, key: string, search: () => Promise<Searched>): Promise<Searched> {
  const run = search().finally(() => {
    if (running.get(key) === run) running.delete(key);
  });
  running.set(key, run);
  return run;
}

/** `GET /api/entity/{domain}/history` (docs/api.md#history): the domain is the path's fourth segment. */
const HISTORY: ApiRoute<string> = {
  read(request) {
    let domain: string;
    try {
      domain = decodeURIComponent(request.path.split("/")[3] ?? "");
    } catch {
      return error(400, "invalid_query", "The path is not valid percent-encoded UTF-8.");
    }
    const checked = checkParams(HistoryParams, { domain });
    if (!checked.ok) return error(400, "invalid_query", checked.message);
    const parsed = parseQuery(checked.value.domain);
    if (!parsed.ok || parsed.query.kind !== "domain") return error(400, "invalid_query", `${JSON.stringify(domain)} is not a domain`);
    return { input: parsed.query.domain };
  },
  async answer(api, domain) {
    const store = await api.deps.resolver.store;
    if (!store) return unavailable("no index");
    const found = await store.history(domain).catch(() => undefined);
    if (found === undefined) return unavailable("unreadable");
    if (found === null) return error(404, "not_found", `The index has no record of ${domain}; look it up first.`);
    return { status: 200, headers: HISTORY_FRESH, json: found };
  },
};

/** `GET /api/changes?after=&limit=` (docs/api.md#changes): every recorded change, in the order recorded, after a cursor; it reads the index as a search does, and counts as one. */
const CHANGES: ApiRoute<{ cursor: ReturnType<typeof decodeChangeCursor> | null; limit: number }> = {
  read(request) {
    const checked = checkParams(ChangesParams, paramsOf(request.params, ["after", "limit"]));
    if (!checked.ok) return error(400, "invalid_query", checked.message);
    const cursor = checked.value.after === undefined ? null : decodeChangeCursor(checked.value.after);
    return { input: { cursor, limit: checked.value.limit === undefined ? CHANGES_DEFAULT : Number(checked.value.limit) } };
  },
  async answer(api, { cursor, limit }, _admission, client) {
    const { deps } = api;
    const { resolver, log } = deps;
    const store = await resolver.store;
    if (!store) return unavailable("no index");
    const read = async () => {
      const after = cursor === null ? null : await store.positionOf(cursor);
      return cursor !== null && after === null ? null : store.changes({ after }, limit);
    };
    const page = await inSearchTurn(deps, client, read).catch((err: unknown) => {
      log.warn(`store: the changes could not be read: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    });
    if (isRefusal(page)) return refused(page);
    if (page === undefined) return unavailable("unreadable");
    if (page === null) return error(400, "invalid_query", NOT_A_POSITION);
    return { status: 200, headers: CHANGES_FRESH, json: changesAnswer(page) };
  },
};

/** `GET /api/openapi.json` (docs/api.md): the API described, made on first use. */
const OPENAPI: ApiRoute<null> = {
  read: () => ({ input: null }),
  answer(api) {
    api.description ??= Buffer.from(`${JSON.stringify(openApiDocument(), null, 2)}\n`);
    return { status: 200, headers: DESCRIPTION_FRESH, json: null, bytes: api.description };
  },
};

/** Any other path under `/api/`: 404. */
const UNKNOWN: ApiRoute<null> = {
  read: () => ({ input: null }),
  answer: () => error(404, "not_found", "No such API route; the routes are described at /api/openapi.json."),
};

/**
 * An API route's steps, run by {@link run} in the pipeline's order (docs/architecture.md#routes):
 * its parameters read (a 400 when they are not valid), a kept answer (which spends nothing), the
 * admission its row names (web/admission.ts `admitAs`: the steps say what a lookup asks, never
 * whether it is asked), then its answer.
 */
type ApiRoute<I> = {
  read(request: ApiRequest): { input: I } | Answer;
  /** A kept answer, or the input to go on with. */
  kept?(api: ApiState, input: I): Promise<{ kept: Answer } | { input: I }>;
  /** What a lookup's admission asks: given exactly when its row's admission is a lookup or the check. */
  lookup?(input: I): LookupAsked;
  answer(api: ApiState, input: I, admission: LookupTaken | null, client: string): Promise<Answer> | Answer;
};

/** The API's own routes, by their rows (web/routes.ts): those whose handler is web/api.ts. */
export type ApiKind = "api:resolve" | "api:search" | "api:changes" | "api:history" | "api:openapi" | "api:unknown";

type Steps = (api: ApiState, request: ApiRequest) => Promise<Answer>;

/**
 * A route's steps bound to its row's admission. Steps that give a lookup its row does not admit, or
 * none for a row that admits one, disagree with the table: that fails when this file is loaded, not
 * on a request.
 */
function bound<I>(kind: ApiKind, route: ApiRoute<I>): Steps {
  const { admission } = ROUTES[kind];
  const admitsLookup = admission === "lookup" || admission === "check";
  if (admitsLookup !== (route.lookup !== undefined)) {
    throw new Error(`api: ${kind}'s row admits ${admission ?? "nothing"}, and its steps ${route.lookup ? "give" : "give no"} lookup`);
  }
  return (api, request) => run(api, request, admission, route);
}

const API_ROUTES: Record<ApiKind, Steps> = {
  "api:resolve": bound("api:resolve", RESOLVE),
  "api:search": bound("api:search", SEARCH),
  "api:changes": bound("api:changes", CHANGES),
  "api:history": bound("api:history", HISTORY),
  "api:openapi": bound("api:openapi", OPENAPI),
  "api:unknown": bound("api:unknown", UNKNOWN),
};

/** Whether `kind` is one of the API's own routes. */
export const isApiKind = (kind: RouteKind): kind is ApiKind => Object.hasOwn(API_ROUTES, kind);

async function run<I>(api: ApiState, request: ApiRequest, admission: RouteRow["admission"], route: ApiRoute<I>): Promise<Answer> {
  const read = route.read(request);
  if (!("input" in read)) return read;
  const kept = route.kept ? await route.kept(api, read.input) : read;
  if (!("input" in kept)) return kept.kept;
  const admitted = await admitAs(api.deps, admission, request.client, route.lookup?.(kept.input) ?? null);
  if (!admitted.ok) return refused(admitted.refused);
  return route.answer(api, kept.input, admitted.lookup, request.client);
}

/** The answer of the API route the path names (its row in web/routes.ts). */
function route(api: ApiState, request: ApiRequest): Promise<Answer> {
  const kind = apiRouteOf(request.path);
  return API_ROUTES[isApiKind(kind) ? kind : "api:unknown"](api, request);
}

async function answer(api: ApiState, request: ApiRequest): Promise<ApiReply> {
  const { deps, policy } = api;
  if (request.method === "OPTIONS") return { status: 204, headers: Object.assign({}, PREFLIGHT_HEADERS, NO_STORE), body: null };
  const made: Answer =
    request.method === "GET" || request.method === "HEAD"
      ? await route(api, request)
      : error(405, "invalid_request", "The API answers GET, HEAD and OPTIONS only.", { Allow: "GET, HEAD, OPTIONS" });
  // One client's counters never go on an answer a shared cache may hand to others (docs/api.md#limits).
  const limits = sharedCacheMayKeep(made.headers) ? policy : await rateLimitHeaders(deps.resolver.traffic.windows, request.client);
  const bytes = made.bytes ?? Buffer.from(JSON.stringify(made.json));
  const headers = Object.assign({}, made.headers, CORS_HEADERS, limits, { "Content-Type": "application/json" });
  if (made.status !== 200) return { status: made.status, headers, body: request.method === "HEAD" ? null : bytes };
  // Compressed for a client that takes gzip, once per kept answer; each coding has its own tag (RFC 9110 §8.8.3).
  const gzip = bytes.length >= GZIP_FROM && acceptsGzip(request.header("accept-encoding") ?? undefined);
  const sent = gzip ? gzipped(bytes) : bytes;
  const etag = gzip ? `${tagOf(bytes).slice(0, -1)}-gzip"` : tagOf(bytes);
  Object.assign(headers, { ETag: etag, Vary: "Accept-Encoding" }, gzip ? { "Content-Encoding": "gzip" } : {});
  if (notModified(request.header("if-none-match"), etag)) return { status: 304, headers, body: null };
  headers["Content-Length"] = String(sent.length);
  return { status: 200, headers, body: request.method === "HEAD" ? null : sent };
}

function serve(api: ApiState, req: IncomingMessage, res: ServerResponse, route: Route): void {
  const { deps, policy } = api;
  if (route.target.kind !== "api") throw new Error(`api: ${route.path} is not an API route`);
  const request: ApiRequest = {
    method: req.method ?? "GET",
    path: route.target.path,
    params: route.target.params,
    client: currentClient(deps),
    header: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(", ") : (value ?? null);
    },
  };
  const reply = (r: ApiReply) => {
    // The API's answers carry a page's policy (its nonce never used: an answer is data).
    res.setHeader("Content-Security-Policy", contentSecurityPolicy(randomBytes(16).toString("base64")));
    send(req, res, { status: r.status, headers: r.headers, body: r.body });
  };
  answer(api, request).then(reply, (err: unknown) => {
    deps.log.error(`api: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    const body = Buffer.from(JSON.stringify(error(500, "unavailable", "This resolver could not answer; try again shortly.").json));
    reply({ status: 500, headers: Object.assign({}, NO_STORE, CORS_HEADERS, policy, { "Content-Type": "application/json" }), body });
  });
}
