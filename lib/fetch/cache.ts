import { LRUCache } from "lru-cache";
import { DEFAULTS } from "../limits";
import type { FetchMode, FetchOutcome } from "./fetcher";
import type { Priority } from "./outbound";

/** A fetch outcome as the cache hands it out (docs/decisions.md#caching). */
export type CachedOutcome = {
  outcome: FetchOutcome;
  fetchedAt: number;
  stale: boolean;
  /** Until when this answer stands unless the cache changes (fresh turns stale, a failure is gone), in ms; a stale one, now. */
  until: number;
};

export type CacheOptions = {
  /** How long a found document is fresh. @default 1 hour */
  freshMs?: number;
  /** Longest a found document is ever used, stale or not (`IDENT_CACHE_TTL_S`). @default 24 hours */
  maxAgeMs?: number;
  /** How long a not-found or failed outcome is kept. @default 5 minutes */
  failureMs?: number;
  /** Bound on the bytes held. @default 64 MiB */
  maxBytes?: number;
  /** Clock, in ms. @default Date.now */
  now?: () => number;
};

export type LoadOptions = {
  refresh?: boolean;
  /** A stale document is fetched again before it is answered (re-verification, docs/decisions.md#discovery). */
  revalidate?: boolean;
};

/**
 * Starts one fetch, for a person or as a background refresh. It may throw at once (a refusal, such as
 * a spent query budget): then nothing starts and nothing is kept.
 */
export type StartLoad = (priority: Priority) => Promise<FetchOutcome>;

/** The per-URL outcome cache the resolver is built with. */
export type DocumentCache = {
  /** The outcome for `url`, from the cache when it may be, else from `load`; concurrent calls share one load. */
  get(url: string, mode: FetchMode, load: StartLoad, options?: LoadOptions): Promise<CachedOutcome>;
  /**
   * The outcome for `url` when the cache may answer it now, without waiting for a load; undefined
   * otherwise. A stale document is answered and starts its background refresh with `load`, as `get` does.
   */
  peek(url: string, mode: FetchMode, load: StartLoad): CachedOutcome | undefined;
  /** Whether a fetch of `url` is running now (a request for it would join that one). */
  loading(url: string, mode: FetchMode): boolean;
  clear(): void;
  readonly size: number;
  /**
   * A number that moves whenever an outcome is kept, replaced or dropped: two equal readings, and
   * a clock before every `until` read, mean every answer read between them is unchanged.
   */
  readonly generation: number;
};

type Entry = { outcome: FetchOutcome; fetchedAt: number };

/** Transient failures: a background refresh that ends in one keeps the stale document. */
const TRANSIENT = new Set(["unreachable", "timeout"]);

/**
 * docs/decisions.md#caching: found documents are fresh for 1 h, then served stale while one background refresh runs,
 * and never used past 24 h; failures are kept 5 min. Bounded by bytes, least recently used first out.
 * Concurrent requests for one URL share one load (docs/decisions.md#budget).
 */
export function createDocumentCache(options: CacheOptions = {}): DocumentCache {
  const maxAgeMs = options.maxAgeMs ?? DEFAULTS.cacheTtlS * 1000;
  const freshMs = Math.min(options.freshMs ?? DEFAULTS.cacheFreshS * 1000, maxAgeMs);
  const failureMs = Math.min(options.failureMs ?? DEFAULTS.failureTtlS * 1000, maxAgeMs);
  const now = options.now ?? Date.now;
  let generation = 0;
  const lru = new LRUCache<string, Entry>({
    dispose: () => void generation++,
    maxSize: options.maxBytes ?? DEFAULTS.cacheBytes,
    sizeCalculation: (e) =>
      512 +
      e.outcome.url.length * 2 +
      (e.outcome.ok ? e.outcome.body.length * 2 : (e.outcome.message.length + (e.outcome.detail?.length ?? 0)) * 2),
  });
  const inFlight = new Map<string, Promise<Entry>>();

  function loadShared(key: string, load: StartLoad, priority: Priority): Promise<Entry> {
    const running = inFlight.get(key);
    if (running) return running;
    // A refusal thrown by `load` leaves nothing in flight; one it rejects with is never kept.
    const promise = load(priority)
      .then((outcome) => {
        const entry = { outcome, fetchedAt: now() };
        const previous = lru.get(key);
        // A refresh that failed for a passing reason keeps the document it would replace.
        if (!(previous?.outcome.ok && !outcome.ok && TRANSIENT.has(outcome.status))) {
          lru.set(key, entry);
          generation++;
        }
        return entry;
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, promise);
    return promise;
  }

  function peek(key: string, load: StartLoad, revalidate = false): CachedOutcome | undefined {
    const entry = lru.get(key);
    if (!entry) return undefined;
    const age = now() - entry.fetchedAt;
    if (entry.outcome.ok) {
      if (age < freshMs) return { ...entry, stale: false, until: entry.fetchedAt + freshMs };
      if (age < maxAgeMs && !revalidate) {
        try {
          loadShared(key, load, "background").catch(() => undefined);
        } catch {
          // Refused (the query's budget is spent): the stale document is served, the next lookup refreshes it.
        }
        // Asked again each time: a refresh that could not start now is started by the next reader.
        return { ...entry, stale: true, until: now() };
      }
    } else if (age < failureMs) {
      return { ...entry, stale: false, until: entry.fetchedAt + failureMs };
    }
    return undefined;
  }

  return {
    async get(url, mode, load, opts = {}) {
      const key = `${mode} ${url}`;
      const hit = opts.refresh ? undefined : peek(key, load, opts.revalidate);
      if (hit) return hit;
      const fresh = await loadShared(key, load, "person");
      return { ...fresh, stale: false, until: fresh.fetchedAt + (fresh.outcome.ok ? freshMs : failureMs) };
    },
    peek: (url, mode, load) => peek(`${mode} ${url}`, load),
    loading: (url, mode) => inFlight.has(`${mode} ${url}`),
    clear: () => {
      lru.clear();
      generation++;
    },
    get size() {
      return lru.size;
    },
    get generation() {
      return generation;
    },
  };
}
