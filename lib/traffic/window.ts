import { LRUCache } from "lru-cache";
import { MINUTE_MS } from "./limits";

export type WindowOptions = {
  /** Takes allowed in any window. */
  limit: number;
  /** @default 60 s */
  windowMs?: number;
  /** Keys remembered at most; the least recent are forgotten. @default 10000 */
  maxKeys?: number;
  now?: () => number;
};

export type RateDecision = { ok: true } | { ok: false; retryAfterS: number };

/**
 * A per-minute limit (docs/architecture.md#traffic). Asynchronous, because a fleet counts in Redis
 * (./shared-window.ts); this instance's own answers at once.
 */
export type RateLimiter = {
  /** Counts one for `key` when the window allows it, and says whether it did. */
  take(key: string): Promise<RateDecision>;
  /** What `take` would answer, without counting anything. */
  check(key: string): Promise<RateDecision>;
};

/**
 * A sliding window per key: at most `limit` takes in any `windowMs`, so no burst at a window's edge
 * doubles it. Each key keeps the times of its takes still in the window (at most `limit` of them).
 */
export function createWindowLimiter(options: WindowOptions): RateLimiter {
  const { limit } = options;
  const windowMs = options.windowMs ?? MINUTE_MS;
  const now = options.now ?? Date.now;
  const logs = new LRUCache<string, number[]>({ max: options.maxKeys ?? 10_000 });

  function decide(key: string, take: boolean): RateDecision {
    const t = now();
    const times = logs.get(key) ?? [];
    let expired = 0;
    while (expired < times.length && (times[expired] ?? 0) <= t - windowMs) expired++;
    if (expired > 0) times.splice(0, expired);
    if (times.length >= limit) {
      // The take that leaves the window first makes room.
      const first = times[times.length - limit] ?? t;
      return { ok: false, retryAfterS: Math.max(1, Math.ceil((first + windowMs - t) / 1000)) };
    }
    if (take) {
      times.push(t);
      logs.set(key, times);
    }
    return { ok: true };
  }

  return { take: async (key) => decide(key, true), check: async (key) => decide(key, false) };
}
