import type { Config } from "./config.ts";
import { createDocumentCache, type DocumentCache } from "./fetch/cache.ts";
import { createFetcher, type FetcherOptions, type SocketStats } from "./fetch/fetcher.ts";
import type { Fetcher } from "./fetch/outcome.ts";
import { createThreadedFetcher, type OutboundView } from "./fetch/thread.ts";
import { connectRedis, KEY_PREFIX, type FleetLink } from "./redis.ts";
import { createSharedDocuments, type SharedDocuments } from "./fleet/shared-documents.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { createResolverCore, type Resolver } from "./resolver/index.ts";
import { lookupsInProgress } from "./resolver/in-progress.ts";
import { createWindows, fetchBudgets, isRefusal, type TrafficSettings, type Windows } from "./traffic/index.ts";
import { createOutboundGate } from "./traffic/outbound.ts";
import { createSearchGate, searchGateOptions, type SearchGate } from "./traffic/search-gate.ts";
import type { SearchResponse } from "./result/record.ts";
import { reverify, startCrawler, type Crawler } from "./discovery/crawler.ts";
import { openStore, type Store } from "./store/index.ts";
import { DEFAULTS } from "./limits.ts";
import { USER_AGENT } from "./version.ts";
import { extend } from "./objects.ts";

// What the app and the CLI build from their configuration, from this one entry (docs/library.md).
export { configErrorMessage, parseConfig, type Config } from "./config.ts";
export { createLogger, type Logger } from "./log.ts";
/** The traffic limits of a configured resolver (docs/architecture.md#traffic), for admission and /metrics. */
export type Traffic = {
  settings: TrafficSettings;
  /**
   * Every per-minute limit, counted by the fleet in Redis where declared so; with a fetch thread, its
   * budgets (a host's minute, for admission) are read from the thread's count whenever Redis cannot answer.
   */
  windows: Windows;
  /** The outbound cap and its queue. */
  outbound: OutboundView;
  /** Searches of the index at once, with a fair queue (lib/traffic/search-gate.ts). */
  searches: SearchGate;
};

export type ConfiguredResolver = Resolver & {
  traffic: Traffic;
  /** The connection to Redis when `IDENT_REDIS_URL` is set (docs/deploying.md#redis). */
  fleet: FleetLink | null;
  metrics: Metrics;
  /** The index, once open; null when it could not be opened (lookups are answered all the same). */
  store: Promise<Store | null>;
  /** A response answered from the cache alone (never recorded by the resolver), with what the index knows. */
  remember(response: SearchResponse, client?: string): Promise<SearchResponse>;
  /**
   * Waits up to `timeoutMs` for the lookups in progress to end and be recorded, those whose client
   * went away among them (docs/deploying.md#upgrading-without-losing-results); how many still run.
   */
  finishLookups(timeoutMs: number): Promise<number>;
  close(): Promise<void>;
};

/**
 * The production resolver from a validated configuration: the guarded fetcher with its outbound cap
 * and per-host budget, the byte-bounded cache and the limits; with `IDENT_REDIS_URL`, the cache and
 * the limits shared by the fleet (docs/deploying.md). The CLI and the server adapter both use this,
 * so they never disagree.
 */
export function createConfiguredResolver(
  config: Config,
  extra: Pick<FetcherOptions, "ca"> & {
    store?: Promise<Store | null>;
    log?: (line: string) => void;
    /**
     * Fetch on a worker thread (lib/fetch/thread.ts): the server's choice, so pages never wait behind
     * fetches. `bundled`: the app was built by Next, so the thread's code is JavaScript.
     */
    fetchThread?: { bundled: boolean } | false;
  } = {},
): ConfiguredResolver {
  const { store = Promise.resolve(null), log = console.error, fetchThread = false, ...fetcherExtra } = extra;
  const fleet = config.redisUrl ? connectRedis(config.redisUrl, { log }) : null;
  const limits = config.traffic;
  const { windows, outbound, fetcher } = createOutbound(config, fleet, fetchThread, fetcherExtra, log);
  const metrics = createMetrics({ outbound, sockets: () => fetcher.sockets(), store, fleet });
  const counted = countedFetcher(fetcher, metrics);
  const { shared, cache } = createCache(config, fleet, metrics);
  // docs/deploying.md#what-redis-holds: one publisher request per URL for the whole fleet.
  const lookups = lookupsInProgress(createIndexedResolver(config, shared ? shared.singleFlight(counted) : counted, cache, store));
  const parts = {
    traffic: {
      settings: limits,
      windows,
      outbound,
      // docs/architecture.md#traffic: searches of the index at once, per instance (its engine) and per client.
      searches: createSearchGate(searchGateOptions(config.store.kind, limits)),
    },
    fleet,
    metrics,
    store,
    remember: async (response: SearchResponse, client?: string) => {
      const index = await store;
      return index ? index.recordResponse(response, client) : response;
    },
    finishLookups: lookups.finish,
    async close() {
      await fetcher.close();
      await fleet?.close();
      await (await store)?.close();
    },
  };
  return extend(lookups.resolver, parts);
}

/** The fetcher of a configured resolver: one that can be closed and says how its sockets are used. */
type ClosableFetcher = Fetcher & { close(): Promise<void>; sockets(): SocketStats | Promise<SocketStats> };

/**
 * The guarded fetcher with its outbound cap, and every per-minute limit (docs/architecture.md#traffic),
 * in Redis when there is one (and here whenever Redis cannot answer); with `fetchThread`, on a worker thread.
 */
function createOutbound(
  config: Config,
  fleet: FleetLink | null,
  fetchThread: { bundled: boolean } | false,
  fetcherExtra: Pick<FetcherOptions, "ca">,
  log: (line: string) => void,
): { windows: Windows; outbound: OutboundView; fetcher: ClosableFetcher } {
  const limits = config.traffic;
  const counting = fleet ? { link: fleet, keyPrefix: KEY_PREFIX } : null;
  const common = {
    timeoutMs: config.fetchTimeoutMs,
    connectTo: config.connectTo,
    userAgent: USER_AGENT,
    hostAtOnce: limits.hostAtOnce,
    addressAtOnce: limits.addressAtOnce,
  };
  if (fetchThread) {
    // docs/architecture.md#fetch-and-memory: the thread holds the outbound gate and counts the fetch
    // budgets (in Redis on a connection of its own); this thread's limiters of them ask it.
    const budgets = { settings: limits, fleet: config.redisUrl ? { redisUrl: config.redisUrl, keyPrefix: KEY_PREFIX } : null };
    const settings = extend(common, {
      maxOutbound: limits.outbound,
      maxQueued: limits.outboundQueue,
      budgets,
      bundled: fetchThread.bundled,
      ...(fetcherExtra.ca ? { ca: fetcherExtra.ca } : {}),
    });
    const threaded = createThreadedFetcher(settings, { log });
    const windows = createWindows(limits, counting, undefined, config.fetchTimeoutMs, threaded.budgets);
    return { windows, outbound: threaded.outbound, fetcher: threaded };
  }
  const windows = createWindows(limits, counting, undefined, config.fetchTimeoutMs);
  const gate = createOutboundGate({ max: limits.outbound, maxQueued: limits.outboundQueue, maxWaitMs: config.fetchTimeoutMs });
  const fetcher = createFetcher(Object.assign({}, common, { outbound: gate, budgets: fetchBudgets(windows, limits) }, fetcherExtra));
  return { windows, outbound: gate, fetcher };
}

/** `fetcher`, each outcome counted in the metrics: a refusal by its limit, a fetch by its outcome and time. */
function countedFetcher(fetcher: Fetcher, metrics: Metrics): Fetcher {
  return async (url, mode, options) => {
    const outcome = await fetcher(url, mode, options);
    if (isRefusal(outcome)) {
      metrics.refusals.inc({ limit: outcome.refused });
      return outcome;
    }
    metrics.fetches.inc({ outcome: outcome.status });
    metrics.fetchSeconds.observe(outcome.ms / 1000);
    return outcome;
  };
}

/** The byte-bounded cache, its hits and misses counted; with Redis, the documents the fleet shares. */
function createCache(config: Config, fleet: FleetLink | null, metrics: Metrics): { shared: SharedDocuments | null; cache: DocumentCache } {
  const ages = { maxAgeMs: config.cacheTtlS * 1000, freshMs: config.cacheFreshS * 1000, failureMs: DEFAULTS.failureTtlS * 1000 };
  const shared = fleet ? createSharedDocuments(fleet, extend(ages, { fetchTimeoutMs: config.fetchTimeoutMs })) : null;
  const cache = createDocumentCache({
    observe: (tier, hit) => metrics.cache.inc({ tier, result: hit ? "hit" : "miss" }),
    ...ages,
    ...(shared ? { shared } : {}),
  });
  return { shared, cache };
}

/** The resolver over `fetch` and the cache, with the configured limits, recording what it resolves in the index. */
function createIndexedResolver(config: Config, fetch: Fetcher, cache: DocumentCache, store: Promise<Store | null>): Resolver {
  const limits = config.traffic;
  return createResolverCore({
    fetch,
    cache,
    limits: { maxClaims: config.maxClaims, maxConnections: config.maxConnections, maxFetchesPerQuery: limits.fetchesPerQuery },
    // docs/decisions.md#the-index: every resolution is recorded, whatever started it.
    annotate: async (result, client) => {
      const index = await store;
      return index ? index.record(result, client) : result;
    },
    preview: async (domain, fetchedAt) => {
      const index = await store;
      return index ? index.preview(domain, fetchedAt) : null;
    },
  });
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
  return openStore(config.store, log, { discovery, followS: config.followS }).catch((err: unknown) => {
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
        resolveEntity: (domain) => reverify(resolver, domain),
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
