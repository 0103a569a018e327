import { LRUCache } from "lru-cache";

export type RateLimitOptions = {
  /** Requests allowed per window. */
  limit: number;
  /** @default 60 s */
  windowMs?: number;
  /** Keys remembered at most; the least recent are forgotten. @default 10000 */
  maxKeys?: number;
  now?: () => number;
};

export type RateDecision = { ok: true } | { ok: false; retryAfterS: number };

/** Asynchronous, because a fleet counts in Redis (lib/fleet/shared-limit.ts); this instance's own answers at once. */
export type RateLimiter = {
  /** Counts one request for `key` when the window allows it, and says whether it did. */
  take(key: string): Promise<RateDecision>;
  /** What `take` would answer, without counting anything. */
  check(key: string): Promise<RateDecision>;
};

/**
 * A fixed-window counter per key: the refresh and cold-lookup limits per client, and the outbound
 * budget per target host (docs/decisions.md#caching, docs/decisions.md#outbound-work).
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const { limit } = options;
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  const windows = new LRUCache<string, { start: number; count: number }>({ max: options.maxKeys ?? 10_000 });

  function decide(key: string, count: boolean): RateDecision {
    const t = now();
    let w = windows.get(key);
    if (!w || t - w.start >= windowMs) {
      w = { start: t, count: 0 };
      if (count) windows.set(key, w);
    }
    if (w.count >= limit) return { ok: false, retryAfterS: Math.max(1, Math.ceil((w.start + windowMs - t) / 1000)) };
    if (count) w.count++;
    return { ok: true };
  }

  return { take: async (key) => decide(key, true), check: async (key) => decide(key, false) };
}
