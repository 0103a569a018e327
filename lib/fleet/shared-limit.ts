/**
 * A rate limit counted in Redis, so that it holds for the whole fleet (docs/deploying.md#what-redis-holds):
 * the refresh and cold-lookup limits per client, and the per-host outbound budget. Windows are fixed
 * and aligned on the clock (`limit:<name>:<window start>:<key>`, gone with their window). When Redis
 * cannot answer, the instance's own limiter answers (docs/deploying.md#when-a-part-fails).
 */
import type { RateDecision, RateLimiter } from "../rate-limit";
import { KEY_PREFIX, type FleetLink } from "./redis";

// Counts one unless the window is full; answers the count before it.
const TAKE = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return n end
redis.call('INCR', KEYS[1])
if n == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n`;

export type SharedLimitOptions = {
  /** Names the limit in its keys ("cold", "refresh", "host"). */
  name: string;
  limit: number;
  /** @default 60 s */
  windowMs?: number;
  now?: () => number;
};

export function createSharedRateLimiter(link: FleetLink, local: RateLimiter, options: SharedLimitOptions): RateLimiter {
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;

  async function decide(key: string, count: boolean): Promise<RateDecision> {
    const t = now();
    const start = Math.floor(t / windowMs) * windowMs;
    const redisKey = `${KEY_PREFIX}limit:${options.name}:${start}:${key}`;
    const before = await link.run(async (r) =>
      count
        ? Number(await r.eval(TAKE, 1, redisKey, String(options.limit), String(windowMs + 1000)))
        : Number((await r.get(redisKey)) ?? 0),
    );
    // Redis cannot say: this instance's own count decides (and keeps counting meanwhile).
    if (before === null) return count ? local.take(key) : local.check(key);
    if (before >= options.limit) return { ok: false, retryAfterS: Math.max(1, Math.ceil((start + windowMs - t) / 1000)) };
    return { ok: true };
  }

  return { take: (key) => decide(key, true), check: (key) => decide(key, false) };
}
