/**
 * The document limits of the resolver, written once (docs/decisions.md#fetching,
 * docs/decisions.md#budget, docs/decisions.md#caching): deadlines, sizes, claims per entity, cache
 * ages. The traffic limits (what may run at once or in a minute) are declared in lib/traffic/limits.ts.
 */
import { FETCH_DEADLINE_MS, LIMITS } from "./traffic/limits.ts";

export const MiB = 1024 * 1024;

export const DEFAULTS = {
  /** One deadline per document: connect, headers and body together (`IDENT_FETCH_TIMEOUT_MS`). */
  fetchTimeoutMs: FETCH_DEADLINE_MS,
  /** Redirects followed at most. */
  maxRedirects: 3,
  /** Decoded bytes of a JSON document, and of an HTML page (fallback or rel=me). */
  maxBytes: { json: MiB, html: 2 * MiB },
  /** Properties checked per entity, and credentials checked per entity (`IDENT_MAX_CLAIMS`). */
  maxClaims: 50,
  /** Connections checked per entity (`IDENT_MAX_CONNECTIONS`). */
  maxConnections: 10,
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
  /** Fetches one query may start (docs/architecture.md#traffic `fetchesPerQuery`); the claims past it are `not_checked`. @default 300 */
  maxFetchesPerQuery: number;
};

export const DEFAULT_LIMITS: Limits = {
  maxClaims: DEFAULTS.maxClaims,
  maxConnections: DEFAULTS.maxConnections,
  maxFetchesPerQuery: LIMITS.fetchesPerQuery.default,
};
