/**
 * A per-minute limit counted in Redis, so that it holds for the whole fleet
 * (docs/deploying.md#what-redis-holds): the same sliding window as ./window.ts, kept as a sorted set
 * of take times per key (`limit:<name>:<key>`, gone a window after its last take). When Redis cannot
 * answer, the instance's own limiter answers: the limit fails open to one instance's count
 * (docs/deploying.md#when-a-part-fails).
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { MINUTE_MS } from "./limits";
import type { RateDecision, RateLimiter } from "./window";

// ARGV: now, window, limit, take (1 or 0), a member unique to this take. Answers the count in the
// window before it and, when the window is full, the time of the take that leaves it first.
const SLIDE = `
local t = tonumber(ARGV[1])
local w = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t - w)
local n = redis.call('ZCARD', KEYS[1])
if n >= limit then
  local first = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
  return {n, first[2]}
end
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[1], t, ARGV[5])
  redis.call('PEXPIRE', KEYS[1], w)
end
return {n, '0'}`;

/** What the limiter needs of the fleet's link to Redis (lib/fleet/redis.ts): a command that may fail (null). */
export type RedisLink = { run<T>(command: (redis: Pick<Redis, "eval">) => Promise<T>): Promise<T | null> };

export type SharedWindowOptions = {
  /** Names the limit in its keys, after `keyPrefix`. */
  name: string;
  keyPrefix: string;
  limit: number;
  /** @default 60 s */
  windowMs?: number;
  now?: () => number;
};

export function createSharedWindowLimiter(link: RedisLink, local: RateLimiter, options: SharedWindowOptions): RateLimiter {
  const windowMs = options.windowMs ?? MINUTE_MS;
  const now = options.now ?? Date.now;
  const instance = randomBytes(6).toString("hex");
  let seq = 0;

  async function decide(key: string, take: boolean): Promise<RateDecision> {
    const t = now();
    const member = `${t}:${instance}:${seq++}`;
    const answer = await link.run(
      (r) =>
        r.eval(
          SLIDE,
          1,
          `${options.keyPrefix}limit:${options.name}:${key}`,
          t,
          windowMs,
          options.limit,
          take ? "1" : "0",
          member,
        ) as Promise<unknown>,
    );
    // Redis cannot say: this instance's own count decides (and keeps counting meanwhile).
    if (!Array.isArray(answer)) return take ? local.take(key) : local.check(key);
    const count = Number(answer[0]);
    const first = Number(answer[1]);
    if (!Number.isFinite(count) || count < options.limit) {
      if (take) void local.take(key); // kept in step, for when Redis goes away
      return { ok: true };
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil(((Number.isFinite(first) ? first : t) + windowMs - t) / 1000)) };
  }

  return { take: (key) => decide(key, true), check: (key) => decide(key, false) };
}
