/**
 * A cache a library user brings (docs/library.md#what-you-can-bring): Redis, a file, a KV store.
 * It sits behind the resolver's own byte-bounded memory tier (./cache.ts) as the fleet's Redis does:
 * read when the memory tier has nothing, written after every fetch. A cache that fails or answers
 * something else is logged and passed over; a lookup never fails for it.
 */
import { isRecord } from "../documents/json.ts";
import { isRefusal } from "../traffic/refusal.ts";
import { cacheKey, type SharedTier } from "./cache.ts";
import type { Fetcher, FetchOutcome } from "./fetcher.ts";

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

export type UserCacheAges = { freshMs: number; maxAgeMs: number; failureMs: number };

/** A value read back from someone else's store, taken only when it has the shape written. */
const isCachedDocument = (value: unknown): value is CachedDocument =>
  isRecord(value) && typeof value.fetchedAt === "number" && isRecord(value.outcome) && typeof value.outcome.ok === "boolean";

/** The brought cache as the memory tier's second tier, and the fetcher that writes each fetch's outcome into it. */
export function userCacheTier(
  cache: ResolverCache,
  ages: UserCacheAges,
  now: () => number,
  log: (message: string) => void,
): { tier: SharedTier; writing(fetcher: Fetcher): Fetcher } {
  const tier: SharedTier = {
    async read(key) {
      try {
        const value = await cache.get(key);
        if (value === undefined || isCachedDocument(value)) return value;
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
      // docs/decisions.md#caching: a refusal is this resolver's, never kept.
      if (isRefusal(outcome)) return outcome;
      const fetchedAt = now();
      const staleAt = fetchedAt + (outcome.ok ? ages.freshMs : ages.failureMs);
      const expiresAt = fetchedAt + (outcome.ok ? ages.maxAgeMs : ages.failureMs);
      try {
        await cache.set(cacheKey(url, mode), { outcome, fetchedAt }, { staleAt, expiresAt });
      } catch (err) {
        log(`cache: set failed (${err instanceof Error ? err.message : String(err)}); the document is kept in memory only`);
      }
      return outcome;
    };
  return { tier, writing };
}
