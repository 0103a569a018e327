/**
 * The resolver as others use it (docs/library.md): `createResolver(options)` → `resolve(query)`, the
 * record `GET /api/resolve` answers, and `check(documentOrDomain)`, the publisher check. Errors are
 * values shaped as the API's error bodies; nothing here imports a `node:` module.
 */
import { untilAborted } from "./abort.ts";
import { checkDomain } from "./check/live.ts";
import { checkText } from "./check/file.ts";
import type { CheckReport } from "./check/report.ts";
import { createDocumentCache } from "./fetch/cache.ts";
import type { Fetcher } from "./fetch/outcome.ts";
import { userCacheTier, type ResolverCache } from "./fetch/user-cache.ts";
import { fetcherFromFetch, type WebFetch } from "./fetch/web-fetch.ts";
import { DEFAULTS, type Limits } from "./limits.ts";
import { parseQuery } from "./protocol/ids.ts";
import { createResolverCore } from "./resolver/index.ts";
import type { SearchResponse } from "./result/record.ts";
import { answerRefusal, type RefusalBody } from "./traffic/answer.ts";
import { isRefusal } from "./traffic/refusal.ts";
import { USER_AGENT, VERSION } from "./version.ts";

/** What `resolve` and `check` answer instead of a result: the API's error bodies (docs/api.md). */
export type ResolveError = { error: { code: "invalid_query"; message: string } } | RefusalBody;

/** Logs what the resolver passes over (a cache that failed); `console` will do. */
export type ResolverLogger = { warn(message: string): void };

export type ResolverOptions = {
  /** Any WHATWG `fetch`. @default `globalThis.fetch` (the Node entry: the guarded fetcher) */
  fetch?: WebFetch;
  /** A cache the documents are also kept in, behind the resolver's own memory (docs/library.md#what-you-can-bring). */
  cache?: ResolverCache;
  /** Bytes the resolver's own memory cache holds. @default 64 MiB */
  cacheBytes?: number;
  /** The clock, in ms since the epoch. @default Date.now */
  now?: () => number;
  /** @default console */
  logger?: ResolverLogger;
  /** One deadline per document (`IDENT_FETCH_TIMEOUT_MS`). @default 10000 */
  fetchTimeoutMs?: number;
  /** How long a found document is fresh, and the longest it is used (`IDENT_CACHE_FRESH_S`, `IDENT_CACHE_TTL_S`). @default 1 h, 24 h */
  cacheFreshS?: number;
  cacheTtlS?: number;
  /** Claims checked per entity, and fetches per lookup (`IDENT_MAX_CLAIMS`, `IDENT_MAX_CONNECTIONS`). */
  limits?: Partial<Limits>;
  /** Sent as `User-Agent` where the runtime lets a caller set it. @default ident-resolver/<version> */
  userAgent?: string;
};

export type ResolveCallOptions = {
  /** Stops waiting: the promise rejects with the signal's reason. Fetches already started finish within their deadline and are cached. */
  signal?: AbortSignal;
  /** Fetch again now, whatever the cache holds (the API's `refresh=1`). */
  refresh?: boolean;
};

export type IdentResolver = {
  /** The record `GET /api/resolve?q=` answers for `query` (docs/api.md), or the API's error body. */
  resolve(query: string, options?: ResolveCallOptions): Promise<SearchResponse | ResolveError>;
  /**
   * The publisher check (docs/publishing.md#check): a domain checked live, or a document (its text,
   * or the parsed value) checked with nothing fetched.
   */
  check(documentOrDomain: string | object, options?: Pick<ResolveCallOptions, "signal">): Promise<CheckReport | ResolveError>;
  /** This package's version, also in every record `resolve` gives (`resolver.version`). */
  readonly version: string;
};

/** A document to check: a value, or text that is one (it starts with `{`); else null, and the input is a domain. */
function documentText(input: string | object): string | null {
  if (typeof input === "string") return input.trimStart().startsWith("{") ? input : null;
  // A value JSON cannot hold (undefined, a function, a BigInt) is checked as the empty text it becomes: not JSON.
  try {
    return JSON.stringify(input) ?? "";
  } catch {
    return "";
  }
}

/**
 * The library's resolver over `fetcher` (the core's over a `fetch`, the Node entry's over the
 * guarded one): the resolver every surface of the app uses, with the app's defaults.
 */
export function resolverOver(fetcher: Fetcher, options: Omit<ResolverOptions, "fetch">): IdentResolver {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? console;
  const ages = {
    freshMs: (options.cacheFreshS ?? DEFAULTS.cacheFreshS) * 1000,
    maxAgeMs: (options.cacheTtlS ?? DEFAULTS.cacheTtlS) * 1000,
    failureMs: DEFAULTS.failureTtlS * 1000,
  };
  const brought = options.cache ? userCacheTier(options.cache, ages, now, (m) => logger.warn(m)) : null;
  const cache = createDocumentCache(
    Object.assign({ now, maxBytes: options.cacheBytes ?? DEFAULTS.cacheBytes }, ages, brought ? { shared: brought.tier } : {}),
  );
  const core = createResolverCore({
    fetch: brought ? brought.writing(fetcher) : fetcher,
    cache,
    now,
    ...(options.limits ? { limits: options.limits } : {}),
  });
  const settings = { fetchTimeoutMs: options.fetchTimeoutMs ?? DEFAULTS.fetchTimeoutMs };
  return {
    version: VERSION,
    async resolve(query, call = {}) {
      const parsed = parseQuery(query);
      if (!parsed.ok) return { error: { code: "invalid_query", message: parsed.message } };
      const answer = await untilAborted(core.resolve(parsed.query, call.refresh ? { refresh: true } : {}), call.signal);
      return isRefusal(answer) ? answerRefusal(answer).body : answer;
    },
    async check(input, call = {}) {
      const text = documentText(input);
      if (text !== null) return checkText(text, "document", settings);
      const parsed = parseQuery(typeof input === "string" ? input : "");
      if (!parsed.ok || (parsed.query.kind !== "domain" && parsed.query.kind !== "url" && parsed.query.kind !== "network_id")) {
        const message = parsed.ok ? "check takes a domain or a document, not a property or credential id" : parsed.message;
        return { error: { code: "invalid_query", message } };
      }
      const report = await untilAborted(checkDomain(core, parsed.query.domain, settings), call.signal);
      return isRefusal(report) ? answerRefusal(report).body : report;
    },
  };
}

/**
 * A resolver over any WHATWG `fetch` (docs/library.md): in a browser, a worker, an edge runtime. It
 * keeps the protocol's deadline, size cap and redirect rules; which addresses it may reach is that
 * `fetch`'s business. On a server, use `ident-resolver/node`, whose default fetch guards addresses.
 */
export function createResolver(options: ResolverOptions = {}): IdentResolver {
  const fetchFn = options.fetch ?? ((url: string, init: RequestInit) => globalThis.fetch(url, init));
  const fetcher = fetcherFromFetch(fetchFn, {
    timeoutMs: options.fetchTimeoutMs ?? DEFAULTS.fetchTimeoutMs,
    userAgent: options.userAgent ?? USER_AGENT,
  });
  return resolverOver(fetcher, options);
}
