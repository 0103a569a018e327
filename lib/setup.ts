import type { Config } from "./config";
import { createDocumentCache } from "./fetch/cache";
import { createFetcher, type FetcherOptions } from "./fetch/fetcher";
import { createOutboundGate, type OutboundGate } from "./fetch/outbound";
import { createRateLimiter, type RateLimiter } from "./rate-limit";
import { createResolver, type Resolver } from "./resolver";
import type { SearchResponse } from "./result/record";
import { startCrawler, type Crawler } from "./discovery/crawler";
import { openStore, type Store } from "./store";
import { USER_AGENT } from "./version";

/** The outbound side of a configured resolver, for admission (docs/decisions.md#outbound-work). */
export type Traffic = {
  outbound: OutboundGate;
  /** Requests to each host this minute, all clients together. */
  hostBudget: RateLimiter;
};

export type ConfiguredResolver = Resolver & {
  traffic: Traffic;
  /** The index, once open; null when it could not be opened (lookups are answered all the same). */
  store: Promise<Store | null>;
  /** A response answered from the cache alone (never recorded by the resolver), with what the index knows. */
  remember(response: SearchResponse): Promise<SearchResponse>;
  close(): Promise<void>;
};

/**
 * The production resolver from a validated configuration: the guarded fetcher with its outbound cap
 * and per-host budget, the byte-bounded cache and the limits. The CLI and the server adapter both use
 * this, so they never disagree.
 */
export function createConfiguredResolver(
  config: Config,
  extra: Pick<FetcherOptions, "ca"> & { store?: Promise<Store | null> } = {},
): ConfiguredResolver {
  const { store = Promise.resolve(null), ...fetcherExtra } = extra;
  const outbound = createOutboundGate({ max: config.maxOutbound, maxWaitMs: config.fetchTimeoutMs });
  const hostBudget = createRateLimiter({ limit: config.hostBudgetPerMin, windowMs: 60_000 });
  const fetcher = createFetcher({
    timeoutMs: config.fetchTimeoutMs,
    connectTo: config.connectTo,
    userAgent: USER_AGENT,
    outbound,
    hostBudget: { limiter: hostBudget, perMinute: config.hostBudgetPerMin },
    ...fetcherExtra,
  });
  const cache = createDocumentCache({ maxAgeMs: config.cacheTtlS * 1000, freshMs: config.cacheFreshS * 1000 });
  const resolver = createResolver({
    fetch: fetcher,
    cache,
    limits: { maxClaims: config.maxClaims, maxConnections: config.maxConnections, maxFetchesPerQuery: config.maxFetchesPerQuery },
    // docs/decisions.md#the-index: every resolution is recorded, whatever started it.
    annotate: async (result) => {
      const index = await store;
      return index ? index.record(result) : result;
    },
    preview: async (domain, fetchedAt) => {
      const index = await store;
      return index ? index.preview(domain, fetchedAt) : null;
    },
  });
  return {
    ...resolver,
    traffic: { outbound, hostBudget },
    store,
    remember: async (response) => {
      const index = await store;
      return index ? index.recordResponse(response) : response;
    },
    async close() {
      await fetcher.close();
      await (await store)?.close();
    },
  };
}

/**
 * Opens the configured index for a long-running process. A store that cannot be opened is logged
 * and answers null: the process still resolves (start-up checks stop the server before this).
 * With discovery on, `queued` is told when a recorded result queued new domains.
 */
export function openConfiguredStore(
  config: Config,
  log: (line: string) => void = console.error,
  queued?: (n: number) => void,
): Promise<Store | null> {
  const discovery = config.crawl ? { max: config.crawl.max, freshS: config.cacheFreshS, ...(queued ? { queued } : {}) } : null;
  return openStore(config.store, log, { discovery }).catch((err: unknown) => {
    log(`store: ${err instanceof Error ? err.message : String(err)}; lookups are answered without being recorded`);
    return null;
  });
}

/**
 * The index with discovery and re-verification running beside it (docs/decisions.md#discovery):
 * for the server, which resolves in the background as well as for people. The crawler starts once
 * the store is open; null when discovery is off or there is no store.
 */
export function openConfiguredIndex(
  config: Config,
  log: (line: string) => void = console.error,
): { store: Promise<Store | null>; startCrawler(resolver: Resolver): Promise<Crawler | null> } {
  let wake: () => void = () => undefined;
  const store = openConfiguredStore(config, log, () => wake());
  return {
    store,
    async startCrawler(resolver) {
      const index = await store;
      if (!index || !config.crawl) return null;
      const crawler = startCrawler({
        store: index,
        resolveEntity: (domain) => resolver.resolveEntity(domain, { background: true, revalidate: true }),
        concurrency: config.crawl.concurrency,
        seeds: config.crawl.seeds,
        queue: { max: config.crawl.max, freshS: config.cacheFreshS },
        log,
      });
      wake = crawler.wake;
      return crawler;
    },
  };
}
