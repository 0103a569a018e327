import type { Config } from "./config";
import { createDocumentCache } from "./fetch/cache";
import { createFetcher, type FetcherOptions } from "./fetch/fetcher";
import { createOutboundGate, type OutboundGate } from "./fetch/outbound";
import { createRateLimiter, type RateLimiter } from "./rate-limit";
import { createResolver, type Resolver } from "./resolver";
import { USER_AGENT } from "./version";

/** The outbound side of a configured resolver, for admission (docs/decisions.md#outbound-work). */
export type Traffic = {
  outbound: OutboundGate;
  /** Requests to each host this minute, all clients together. */
  hostBudget: RateLimiter;
};

export type ConfiguredResolver = Resolver & { traffic: Traffic; close(): Promise<void> };

/**
 * The production resolver from a validated configuration: the guarded fetcher with its outbound cap
 * and per-host budget, the byte-bounded cache and the limits. The CLI and the server adapter both use
 * this, so they never disagree.
 */
export function createConfiguredResolver(config: Config, extra: Pick<FetcherOptions, "ca"> = {}): ConfiguredResolver {
  const outbound = createOutboundGate({ max: config.maxOutbound, maxWaitMs: config.fetchTimeoutMs });
  const hostBudget = createRateLimiter({ limit: config.hostBudgetPerMin, windowMs: 60_000 });
  const fetcher = createFetcher({
    timeoutMs: config.fetchTimeoutMs,
    connectTo: config.connectTo,
    userAgent: USER_AGENT,
    outbound,
    hostBudget: { limiter: hostBudget, perMinute: config.hostBudgetPerMin },
    ...extra,
  });
  const cache = createDocumentCache({ maxAgeMs: config.cacheTtlS * 1000, freshMs: config.cacheFreshS * 1000 });
  const resolver = createResolver({
    fetch: fetcher,
    cache,
    limits: { maxClaims: config.maxClaims, maxConnections: config.maxConnections, maxFetchesPerQuery: config.maxFetchesPerQuery },
  });
  return { ...resolver, traffic: { outbound, hostBudget }, close: () => fetcher.close() };
}
