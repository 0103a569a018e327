import type { Config } from "./config";
import { createDocumentCache } from "./fetch/cache";
import { createFetcher, type FetcherOptions } from "./fetch/fetcher";
import { createResolver, type Resolver } from "./resolver";
import { USER_AGENT } from "./version";

/**
 * The production resolver from a validated configuration: the guarded fetcher, the byte-bounded
 * cache and the limits. The CLI and the server adapter both use this, so they never disagree.
 */
export function createConfiguredResolver(config: Config, extra: Pick<FetcherOptions, "ca"> = {}): Resolver & { close(): Promise<void> } {
  const fetcher = createFetcher({
    timeoutMs: config.fetchTimeoutMs,
    connectTo: config.connectTo,
    userAgent: USER_AGENT,
    ...extra,
  });
  const cache = createDocumentCache({ maxAgeMs: config.cacheTtlS * 1000, freshMs: config.cacheFreshS * 1000 });
  const resolver = createResolver({
    fetch: fetcher,
    cache,
    limits: { maxClaims: config.maxClaims, maxConnections: config.maxConnections },
  });
  return { ...resolver, close: () => fetcher.close() };
}
