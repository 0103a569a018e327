/**
 * Every default limit of the resolver, written once (docs/decisions.md#fetching,
 * docs/decisions.md#budget, docs/decisions.md#caching). The configuration, the fetcher, the cache and
 * the resolver all read them from here.
 */

export const MiB = 1024 * 1024;

export const DEFAULTS = {
  /** One deadline per document: connect, headers and body together (`IDENT_FETCH_TIMEOUT_MS`). */
  fetchTimeoutMs: 10_000,
  /** Redirects followed at most. */
  maxRedirects: 3,
  /** Decoded bytes of a JSON document, and of an HTML page (fallback or rel=me). */
  maxBytes: { json: MiB, html: 2 * MiB },
  /** Properties checked per entity, and credentials checked per entity (`IDENT_MAX_CLAIMS`). */
  maxClaims: 50,
  /** Connections checked per entity (`IDENT_MAX_CONNECTIONS`). */
  maxConnections: 10,
  /** Fetches to one host name, and to one IP address, at a time. */
  perHost: 6,
  /** Fetches one query may start (`IDENT_MAX_FETCHES_PER_QUERY`). */
  maxFetchesPerQuery: 300,
  /** Fetches in flight per instance; more wait in a queue of 4 × as many (`IDENT_MAX_OUTBOUND`). */
  maxOutbound: 64,
  /** Lookups that start a fetch, per client per minute (`IDENT_COLD_LOOKUPS_PER_MIN`). */
  coldLookupsPerMin: 30,
  /** Requests to one host per minute, for all clients together (`IDENT_HOST_BUDGET_PER_MIN`). */
  hostBudgetPerMin: 300,
  /** How long a found document is served before a background refresh (`IDENT_CACHE_FRESH_S`). */
  cacheFreshS: 3_600,
  /** The longest a cached document is used, stale or not: the protocol's day (`IDENT_CACHE_TTL_S`). */
  cacheTtlS: 86_400,
  /** How long a not-found or failed outcome is kept. */
  failureTtlS: 300,
  /** Bytes the document cache holds at most. */
  cacheBytes: 64 * MiB,
} as const;

/** The per-resolution budget (docs/decisions.md#budget [bind]). */
export type Limits = {
  /** Properties checked per entity, and credentials checked per entity. @default 50 */
  maxClaims: number;
  /** Connections checked per entity. @default 10 */
  maxConnections: number;
  /** Fetches one query may start; the claims past it are reported `limit`. @default 300 */
  maxFetchesPerQuery: number;
};

export const DEFAULT_LIMITS: Limits = {
  maxClaims: DEFAULTS.maxClaims,
  maxConnections: DEFAULTS.maxConnections,
  maxFetchesPerQuery: DEFAULTS.maxFetchesPerQuery,
};
