/**
 * A cache a library user brings (docs/library.md#what-you-can-bring): Redis, a file, a KV store.
 * It sits behind the resolver's own byte-bounded memory tier (./cache.ts) as the fleet's Redis does:
 * read when the memory tier has nothing (for a second at most), written after every fetch that
 * found its document. A cache that fails, is slow or answers something else is logged and passed
 * over; a lookup never fails or waits for it.
 */
import { isRecord } from "../documents/json.ts";
import { isRefusal } from "../traffic/refusal.ts";
import { cacheKey, type SharedTier } from "./cache.ts";
import type { Fetcher, FetchOutcome } from "./outcome.ts";

/** A document as kept: the outcome of its fetch (found or failed), and when it was fetched (ms since the epoch). */
export type CachedDocument = { outcome: FetchOutcome; fetchedAt: number };

/**
 * What a brought cache does. `set` is told when the entry turns stale (a later lookup refreshes it
 * in the background) and when it expires (it must not be answered after): a store with its own
 * expiry can keep it until `expiresAt` and forget it then. Either may return a promise.
 */
export type ResolverCache = {
  get(key: string): CachedDocument | undefined | Promise<CachedDocument | undefined>;
  set(key: string, value: CachedDocument, times: { staleAt: number; expiresAt: number }): void | Promise<void>;
};

/** How long a found document is fresh, and the longest it is used (./cache.ts). */
export type UserCacheAges = { freshMs: number; maxAgeMs: number };

/** How long a read of the brought cache may take before the lookup goes on without it. */
export const CACHE_READ_MS = 1000;

/** A found document read back from someone else's store, taken only with the shape written. */
function isCachedDocument(value: unknown): value is CachedDocument {
  if (!isRecord(value) || typeof value.fetchedAt !== "number" || !Number.isFinite(value.fetchedAt)) return false;
  const o = value.outcome;
  return (
    isRecord(o) &&
    o.ok === true &&
    typeof o.url === "string" &&
    typeof o.finalUrl === "string" &&
    typeof o.body === "string" &&
    typeof o.bytes === "number"
  );
}

/** Nothing, after `ms`: a read that takes longer is given up. */
const after = (ms: number) => new Promise<undefined>((resolve) => setTimeout(resolve, ms));

/**
 * The brought cache as the memory tier's second tier, and the fetcher that writes each found
 * document into it. Only found documents are written: a failure kept there would, once the memory
 * tier asked again, replace a document found within the day and undo serving it stale
 * (docs/decisions.md#caching), which is why the fleet's Redis keeps none either.
 */
export function userCacheTier(
  cache: ResolverCache,
  ages: UserCacheAges,
  now: () => number,
  log: (message: string) => void,
): { tier: SharedTier; writing(fetcher: Fetcher): Fetcher } {
  const freshMs = Math.min(ages.freshMs, ages.maxAgeMs);
  const tier: SharedTier = {
    async read(key) {
      try {
        const value = await Promise.race([Promise.resolve(cache.get(key)), after(CACHE_READ_MS)]);
        if (value === undefined) return undefined;
        // A time ahead of the clock would keep it fresh for ever: it is taken as fetched now.
        if (isCachedDocument(value)) return Object.assign({}, value, { fetchedAt: Math.min(value.fetchedAt, now()) });
        log(`cache: the entry for ${key} is not a cached document; fetched again`);
      } catch (err) {
        log(`cache: get failed (${err instanceof Error ? err.message : String(err)}); fetched instead`);
      }
      return undefined;
    },
    loading: async () => false,
  };
  const writing =
    (fetcher: Fetcher): Fetcher =>
    async (url, mode, options) => {
      const outcome = await fetcher(url, mode, options);
      // docs/decisions.md#caching: a refusal is this resolver's, never kept; a failure stays in memory alone.
      if (isRefusal(outcome) || !outcome.ok) return outcome;
      const fetchedAt = now();
      const times = { staleAt: fetchedAt + freshMs, expiresAt: fetchedAt + ages.maxAgeMs };
      // Not waited for: a slow store never holds a lookup up.
      Promise.resolve()
        .then(() => cache.set(cacheKey(url, mode), { outcome, fetchedAt }, times))
        .catch((err: unknown) =>
          log(`cache: set failed (${err instanceof Error ? err.message : String(err)}); the document is kept in memory only`),
        );
      return outcome;
    };
  return { tier, writing };
}
