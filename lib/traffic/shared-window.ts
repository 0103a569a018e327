/**
 * Per-minute limits counted in Redis, so that they hold for the whole fleet
 * (docs/deploying.md#what-redis-holds): the same sliding windows as ./window.ts, kept as a sorted set
 * of take times per key (`limit:<window>:<key>`, gone a window after its last take). Takes decided
 * together are decided by one script, so no other instance counts between them. When Redis cannot
 * answer, the instance's own counter answers (the fetch thread's, for the fetch budgets it spends:
 * docs/architecture.md#fetch-and-memory): the limits fail open to one instance's count
 * (docs/deploying.md#when-a-part-fails).
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { Counter, JointDecision, Take, Used } from "./window.ts";

// KEYS: one per take. ARGV: now, take (1 or 0), a member unique to this take, then each key's limit
// and window. Answers 0 when all fit (and, with take, counts them all), else the 1-based index of
// the first full window and the time of the take that leaves it first.
const SLIDE = `
local t = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 + 2 * i])
  local w = tonumber(ARGV[3 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', t - w)
  local n = redis.call('ZCARD', key)
  if n >= limit then
    local first = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
    return {i, first[2]}
  end
end
if ARGV[2] == '1' then
  for i, key in ipairs(KEYS) do
    redis.call('ZADD', key, t, ARGV[3])
    redis.call('PEXPIRE', key, tonumber(ARGV[3 + 2 * i]))
  end
end
return {0, '0'}`;

// KEYS: the take's key. ARGV: now, window. Answers how many takes are in the window and the oldest's time.
const USED = `
local t = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t - tonumber(ARGV[2]))
local n = redis.call('ZCARD', KEYS[1])
if n == 0 then return {0, '0'} end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {n, first[2]}`;

/** What the limiter needs of the fleet's link to Redis (lib/redis.ts): a command that may fail (null). */
export type RedisLink = { run<T>(command: (redis: Pick<Redis, "eval">) => Promise<T>): Promise<T | null> };

export type SharedCounterOptions = {
  keyPrefix: string;
  now?: () => number;
};

/** Takes counted in Redis; `local`, this instance's own count, answers whenever Redis cannot, and is kept in step meanwhile. */
export function createSharedCounter(link: RedisLink, local: Counter, options: SharedCounterOptions): Counter {
  const now = options.now ?? Date.now;
  const instance = randomBytes(6).toString("hex");
  let seq = 0;

  async function decide(takes: readonly Take[], take: boolean): Promise<JointDecision> {
    const t = now();
    const member = `${t}:${instance}:${seq++}`;
    const keys = takes.map((one) => `${options.keyPrefix}limit:${one.window}:${one.key}`);
    const limits = takes.flatMap((one) => [one.limit, one.windowMs]);
    const answer = await link.run((r) => r.eval(SLIDE, keys.length, ...keys, t, take ? "1" : "0", member, ...limits) as Promise<unknown>);
    // Redis cannot say: this instance's own count decides (and keeps counting meanwhile).
    if (!Array.isArray(answer)) return local.decide(takes, take);
    const full = Number(answer[0]);
    if (!Number.isInteger(full) || full <= 0) {
      if (take) await local.decide(takes, true); // kept in step, for when Redis goes away
      return { ok: true };
    }
    const first = Number(answer[1]);
    const windowMs = takes[full - 1]?.windowMs ?? 0;
    const retryAfterS = Math.max(1, Math.ceil(((Number.isFinite(first) ? first : t) + windowMs - t) / 1000));
    return { ok: false, index: full - 1, retryAfterS };
  }

  async function used(take: Take): Promise<Used> {
    const t = now();
    const key = `${options.keyPrefix}limit:${take.window}:${take.key}`;
    const answer = await link.run((r) => r.eval(USED, 1, key, t, take.windowMs) as Promise<unknown>);
    if (!Array.isArray(answer)) return local.used(take);
    const n = Number(answer[0]);
    const first = Number(answer[1]);
    if (!Number.isInteger(n) || n <= 0 || !Number.isFinite(first)) return { used: 0, oldestLeavesMs: 0 };
    return { used: n, oldestLeavesMs: Math.max(0, first + take.windowMs - t) };
  }

  return { decide, used };
}
