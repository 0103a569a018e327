import { LRUCache } from "lru-cache";
import { DEFAULTS } from "../limits.ts";
import { extend } from "../objects.ts";
import type { Priority } from "../traffic/outbound.ts";
import { isRefusal, type FetchRefusal } from "../traffic/refusal.ts";
import type { FetchMode, FetchOutcome } from "./outcome.ts";
import { isTransientFailure } from "./transient.ts";

/** A fetch outcome as the cache hands it out (docs/decisions.md#caching). */
export type CachedOutcome = {
  outcome: FetchOutcome;
  fetchedAt: number;
  stale: boolean;
  /** Until when this answer stands unless the cache changes (fresh turns stale, a failure is gone), in ms; a stale one, now. */
  until: number;
  /** The load was refused and this document, known from before, answered instead (docs/architecture.md#traffic). */
  refused?: FetchRefusal;
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
  /** The fleet's cache in Redis behind this one (lib/fleet/shared-documents.ts); none for one instance. */
  shared?: SharedTier;
  /** With a shared tier, how long an answer of this one stands before Redis is asked again. @default 5 s */
  localMs?: number;
  /** Told of every lookup each tier answers or misses (the metrics). */
  observe?: (tier: "local" | "shared", hit: boolean) => void;
};

/** What the document cache needs of the fleet's: reads; the fleet's single flight writes (docs/deploying.md#what-redis-holds). */
export type SharedTier = {
  read(key: string): Promise<{ outcome: FetchOutcome; fetchedAt: number } | undefined>;
  loading(key: string): Promise<boolean>;
};

/** The cache's key for a URL fetched as `mode`, here and in Redis. */
export const cacheKey = (url: string, mode: FetchMode) => `${mode} ${url}`;

export type LoadOptions = {
  refresh?: boolean;
  /** A stale document is fetched again before it is answered (re-verification, docs/decisions.md#discovery). */
  revalidate?: boolean;
  /** A refused load answers its refusal, never a document known from before (the live check). */
  live?: boolean;
};

/**
 * Starts one fetch, for a person or as a background refresh. Its refusal (a spent budget, a full
 * queue) is never kept (docs/architecture.md#traffic).
 */
export type StartLoad = (priority: Priority) => Promise<FetchOutcome | FetchRefusal>;

/** The per-URL outcome cache the resolver is built with. */
export type DocumentCache = {
  /**
   * The outcome for `url`, from the cache when it may be, else from `load`; concurrent calls share one
   * load, and a caller that joined a load refused for its starter's sake tries its own. When the load
   * is refused, a document found within the day is answered rather than the refusal, carrying it.
   */
  get(url: string, mode: FetchMode, load: StartLoad, options?: LoadOptions): Promise<CachedOutcome | FetchRefusal>;
  /**
   * The outcome for `url` when the cache may answer it without a fetch; undefined otherwise. A stale
   * document is answered and starts its background refresh with `load`, as `get` does.
   */
  peek(url: string, mode: FetchMode, load: StartLoad): Promise<CachedOutcome | undefined>;
  /** Whether a fetch of `url` is running now, here or in the fleet (a request for it would join that one). */
  loading(url: string, mode: FetchMode): Promise<boolean>;
  /**
   * False only when a read of `url` now would surely have to start a fetch: nothing held here,
   * nothing in flight, and no fleet's cache to ask. Answered at once, without a promise.
   */
  mayHold(url: string, mode: FetchMode): boolean;
  clear(): void;
  readonly size: number;
  /**
   * A number that moves whenever an outcome is kept, replaced or dropped: two equal readings, and
   * a clock before every `until` read, mean every answer read between them is unchanged.
   */
  readonly generation: number;
};

/** `checkedAt`: when the shared tier last agreed with it (or when it was fetched). */
type Entry = { outcome: FetchOutcome; fetchedAt: number; checkedAt: number };

/** What one cache holds: its times, its tiers, the outcomes kept and the loads running. */
type CacheState = {
  maxAgeMs: number;
  freshMs: number;
  failureMs: number;
  now: () => number;
  shared: SharedTier | undefined;
  observe: CacheOptions["observe"];
  /** How long an answer of this tier stands before the shared tier is asked again; with none, for ever. */
  localMs: number;
  /** Moves whenever an outcome is kept, replaced or dropped (`DocumentCache.generation`). */
  generation: number;
  lru: LRUCache<string, Entry>;
  inFlight: Map<string, Promise<Entry | FetchRefusal>>;
};

/**
 * docs/decisions.md#caching: found documents are fresh for 1 h, then served stale while one background refresh runs,
 * and never used past 24 h; failures are kept 5 min. Bounded by bytes, least recently used first out.
 * Concurrent requests for one URL share one load (docs/decisions.md#budget). With a shared tier, this
 * one is the small in-process tier in front of it (docs/deploying.md#what-redis-holds): its answers
 * stand `localMs`, then Redis is asked whether another instance has a newer one.
 */
export function createDocumentCache(options: CacheOptions = {}): DocumentCache {
  const maxAgeMs = options.maxAgeMs ?? DEFAULTS.cacheTtlS * 1000;
  const { shared, observe } = options;
  const state: CacheState = {
    maxAgeMs,
    freshMs: Math.min(options.freshMs ?? DEFAULTS.cacheFreshS * 1000, maxAgeMs),
    failureMs: Math.min(options.failureMs ?? DEFAULTS.failureTtlS * 1000, maxAgeMs),
    now: options.now ?? Date.now,
    shared,
    observe,
    localMs: shared ? (options.localMs ?? 5000) : Infinity,
    generation: 0,
    lru: new LRUCache<string, Entry>({
      dispose: () => void state.generation++,
      maxSize: options.maxBytes ?? DEFAULTS.cacheBytes,
      // Two bytes a character, and a found body twice: the resolver keeps its parse beside it for as
      // long as it is held here (lib/resolver/memo.ts), about as large again (docs/decisions.md#memory).
      sizeCalculation: (e) =>
        512 +
        e.outcome.url.length * 2 +
        (e.outcome.ok ? e.outcome.body.length * 4 : (e.outcome.message.length + (e.outcome.detail?.length ?? 0)) * 2),
    }),
    inFlight: new Map(),
  };
  const { lru, inFlight } = state;

  return {
    get: (url, mode, load, opts = {}) => getOrLoad(state, url, mode, load, opts),
    peek: (url, mode, load) => peek(state, cacheKey(url, mode), load),
    mayHold: (url, mode) => shared !== undefined || lru.has(cacheKey(url, mode)) || inFlight.has(cacheKey(url, mode)),
    loading: async (url, mode) => inFlight.has(cacheKey(url, mode)) || ((await shared?.loading(cacheKey(url, mode))) ?? false),
    clear: () => {
      lru.clear();
      state.generation++;
    },
    get size() {
      return lru.size;
    },
    get generation() {
      return state.generation;
    },
  };
}

/** The load running for `key`, joined; or a new one, whose outcome is kept (its refusal never is). */
function loadShared(state: CacheState, key: string, load: StartLoad, priority: Priority): Promise<Entry | FetchRefusal> {
  const { now, lru, inFlight } = state;
  const running = inFlight.get(key);
  if (running) return running;
  const promise = load(priority)
    .then((outcome) => {
      if (isRefusal(outcome)) return outcome;
      const entry = { outcome, fetchedAt: now(), checkedAt: now() };
      const previous = lru.get(key);
      // A refresh that failed for a passing reason keeps the document it would replace.
      if (!(previous?.outcome.ok && !outcome.ok && isTransientFailure(outcome))) {
        lru.set(key, entry);
        state.generation++;
      }
      return entry;
    })
    .finally(() => inFlight.delete(key));
  inFlight.set(key, promise);
  return promise;
}

/** The local answer, when it may be given without asking the shared tier. */
function peekLocal(state: CacheState, key: string, load: StartLoad, revalidate = false, justChecked = false): CachedOutcome | undefined {
  const { now, localMs, freshMs, failureMs } = state;
  const entry = state.lru.get(key);
  if (!entry || (!justChecked && now() - entry.checkedAt >= localMs)) return undefined;
  const answer = (until: number, stale = false) => ({
    outcome: entry.outcome,
    fetchedAt: entry.fetchedAt,
    stale,
    until: Math.min(until, entry.checkedAt + localMs),
  });
  const age = now() - entry.fetchedAt;
  if (entry.outcome.ok) {
    if (age < freshMs) return answer(entry.fetchedAt + freshMs);
    if (age < state.maxAgeMs && !revalidate) {
      // Refused (a budget spent), the stale document is served all the same; the next reader asks again.
      loadShared(state, key, load, "background").catch(() => undefined);
      return answer(now(), true);
    }
  } else if (age < failureMs) {
    return answer(entry.fetchedAt + failureMs);
  }
  return undefined;
}

/** This tier's answer; when it has none, or has held it `localMs`, the shared tier's, kept here too. */
async function peek(state: CacheState, key: string, load: StartLoad, revalidate = false): Promise<CachedOutcome | undefined> {
  const { now, shared, observe, lru } = state;
  const hit = peekLocal(state, key, load, revalidate);
  observe?.("local", hit !== undefined);
  if (hit || !shared) return hit;
  const theirs = await shared.read(key);
  observe?.("shared", theirs !== undefined);
  const mine = lru.get(key);
  if (theirs && (!mine || theirs.fetchedAt > mine.fetchedAt)) {
    lru.set(key, extend(theirs, { checkedAt: now() }));
    state.generation++;
  } else if (mine) {
    // Nothing newer in the fleet (or Redis cannot say): this answer stands another `localMs`.
    mine.checkedAt = now();
  }
  return peekLocal(state, key, load, revalidate, true);
}

/**
 * A found document within its day, here or in the fleet, for a load that was refused
 * (docs/architecture.md#traffic): served stale rather than refused.
 */
async function knownWithinDay(state: CacheState, key: string): Promise<CachedOutcome | undefined> {
  const { now, shared } = state;
  const held = state.lru.get(key) ?? (shared ? await shared.read(key) : undefined);
  if (!held?.outcome.ok) return undefined;
  const age = now() - held.fetchedAt;
  if (age >= state.maxAgeMs) return undefined;
  return { outcome: held.outcome, fetchedAt: held.fetchedAt, stale: age >= state.freshMs, until: now() };
}

/**
 * `DocumentCache.get`: the cache's answer when it may give one, else a load's (its own when
 * the one it joined was refused); a refused load answers a document known within the day, carrying it.
 */
async function getOrLoad(
  state: CacheState,
  url: string,
  mode: FetchMode,
  load: StartLoad,
  opts: LoadOptions,
): Promise<CachedOutcome | FetchRefusal> {
  const key = cacheKey(url, mode);
  const hit = opts.refresh ? undefined : await peek(state, key, load, opts.revalidate);
  if (hit) return hit;
  const joined = state.inFlight.has(key);
  let fresh = await loadShared(state, key, load, "person");
  // The load joined may have been refused for its own starter (its query's fetches, its client's
  // share): this caller asks with its own.
  if (isRefusal(fresh) && joined) fresh = await loadShared(state, key, load, "person");
  if (isRefusal(fresh)) {
    const known = opts.live ? undefined : await knownWithinDay(state, key);
    return known ? extend(known, { refused: fresh }) : fresh;
  }
  const until = Math.min(fresh.fetchedAt + (fresh.outcome.ok ? state.freshMs : state.failureMs), fresh.checkedAt + state.localMs);
  return { outcome: fresh.outcome, fetchedAt: fresh.fetchedAt, stale: false, until };
}
