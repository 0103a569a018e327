import { LRUCache } from "lru-cache";

export type RateLimitOptions = {
  /** Requests allowed per window. @default 5 */
  limit?: number;
  /** @default 60 s */
  windowMs?: number;
  /** Clients remembered at most; the least recent are forgotten. @default 10000 */
  maxClients?: number;
  now?: () => number;
};

export type RateDecision = { ok: true } | { ok: false; retryAfterS: number };

/** A fixed-window limiter per client key (docs/decisions.md#caching: `?refresh=1` is rate-limited per client). */
export function createRateLimiter(options: RateLimitOptions = {}) {
  const limit = options.limit ?? 5;
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  const windows = new LRUCache<string, { start: number; count: number }>({ max: options.maxClients ?? 10_000 });
  return function take(key: string): RateDecision {
    const t = now();
    const w = windows.get(key);
    if (!w || t - w.start >= windowMs) {
      windows.set(key, { start: t, count: 1 });
      return { ok: true };
    }
    if (w.count >= limit) return { ok: false, retryAfterS: Math.ceil((w.start + windowMs - t) / 1000) };
    w.count++;
    return { ok: true };
  };
}

/**
 * The client address for rate limiting: the rightmost `X-Forwarded-For` entry that a trusted hop
 * added, never one the client wrote. With `trustedHops` proxies in front of the app, the client is
 * that many entries from the right; entries further left are the client's own claims.
 */
export function clientKey(forwardedFor: string | null, trustedHops: number, fallback = "unknown"): string {
  const hops = (forwardedFor ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  return hops[hops.length - 1 - trustedHops] ?? hops[0] ?? fallback;
}
