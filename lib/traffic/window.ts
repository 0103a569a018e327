import { LRUCache } from "lru-cache";
import { MINUTE_MS } from "./limits.ts";

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
  /** This limit's take of `key`, to be decided together with others' ({@link takeTogether}). */
  part(key: string): Part;
  /** How much of the window `key` has left now, without counting anything (the API's RateLimit header). */
  usage(key: string): Promise<Usage>;
};

/**
 * What a key has left of a window: `remaining` takes, and `resetS`, the seconds until the oldest take
 * still counted leaves the window and makes room for one more (0 when none is counted).
 */
export type Usage = { limit: number; windowS: number; remaining: number; resetS: number };

/** A key's takes still in a window: how many, and in how many ms the oldest of them leaves it (0 when none). */
export type Used = { used: number; oldestLeavesMs: number };

/** One take: of which window (its name), for which key, within which limit over how long (ms). */
export type Take = { window: string; key: string; limit: number; windowMs: number };

/** Several takes decided as one: all counted, or none. `index` names the first take refused. */
export type JointDecision = { ok: true } | { ok: false; index: number; retryAfterS: number };

/** Where takes are counted: this instance (below), Redis (./shared-window.ts), or the fetch thread (lib/fetch/thread.ts). */
export type Counter = {
  /** Whether every take fits its window; with `take`, counts them all when they do, nothing otherwise. */
  decide(takes: readonly Take[], take: boolean): Promise<JointDecision>;
  /** The takes of `take`'s key still in its window, counting nothing. */
  used(take: Take): Promise<Used>;
};

/** A take and the counter it is counted on. */
export type Part = { counter: Counter; take: Take };

export type CounterOptions = {
  /** Keys remembered at most (over every window); the least recent are forgotten. @default 50000 */
  maxKeys?: number;
  now?: () => number;
};

/**
 * Sliding windows per key: at most `limit` takes in any `windowMs` (each take's own), so no burst at a
 * window's edge doubles it. Each key keeps the times of its takes still in the window (at most `limit` of them).
 * Takes decided together are decided without a pause between them: nothing else counts meanwhile.
 */
export function createLocalCounter(options: CounterOptions = {}): Counter {
  const now = options.now ?? Date.now;
  const logs = new LRUCache<string, number[]>({ max: options.maxKeys ?? 50_000 });

  /** The take times of `take`'s key still in the window, and when the take would be allowed again. */
  function inWindow({ window, key, limit, windowMs }: Take, t: number): { times: number[]; retryAfterS: number | null } {
    const times = logs.get(`${window} ${key}`) ?? [];
    let expired = 0;
    while (expired < times.length && (times[expired] ?? 0) <= t - windowMs) expired++;
    if (expired > 0) times.splice(0, expired);
    if (times.length < limit) return { times, retryAfterS: null };
    // The take that leaves the window first makes room.
    const first = times[times.length - limit] ?? t;
    return { times, retryAfterS: Math.max(1, Math.ceil((first + windowMs - t) / 1000)) };
  }

  function decideNow(takes: readonly Take[], take: boolean): JointDecision {
    const t = now();
    const seen = takes.map((one) => inWindow(one, t));
    const index = seen.findIndex((s) => s.retryAfterS !== null);
    if (index >= 0) return { ok: false, index, retryAfterS: seen[index]?.retryAfterS ?? 1 };
    if (take) {
      takes.forEach((one, i) => {
        const times = seen[i]?.times ?? [];
        times.push(t);
        logs.set(`${one.window} ${one.key}`, times);
      });
    }
    return { ok: true };
  }

  function usedNow(one: Take): Used {
    const t = now();
    const { times } = inWindow(one, t);
    const oldest = times[0];
    return { used: times.length, oldestLeavesMs: oldest === undefined ? 0 : Math.max(0, oldest + one.windowMs - t) };
  }

  return { decide: async (takes, take) => decideNow(takes, take), used: async (one) => usedNow(one) };
}

const single = (decision: JointDecision): RateDecision => (decision.ok ? decision : { ok: false, retryAfterS: decision.retryAfterS });

/** The limit `window` of `limit` takes per key in any `windowMs`, counted on `counter`. */
export function limiterOn(counter: Counter, window: string, limit: number, windowMs = MINUTE_MS): RateLimiter {
  const part = (key: string): Part => ({ counter, take: { window, key, limit, windowMs } });
  return {
    take: async (key) => single(await counter.decide([part(key).take], true)),
    check: async (key) => single(await counter.decide([part(key).take], false)),
    part,
    usage: async (key) => {
      const { used, oldestLeavesMs } = await counter.used(part(key).take);
      return {
        limit,
        windowS: Math.round(windowMs / 1000),
        remaining: Math.max(0, limit - used),
        resetS: Math.ceil(oldestLeavesMs / 1000),
      };
    },
  };
}

/**
 * Takes one of each part, all or none, so that nothing else counts between the check of one and the
 * take of another. The parts must share one counter (the limits of one fetch are all the fleet's, or
 * all this instance's).
 */
export function takeTogether(parts: readonly Part[], take = true): Promise<JointDecision> {
  const counter = parts[0]?.counter;
  if (!counter) return Promise.resolve({ ok: true });
  if (parts.some((p) => p.counter !== counter)) throw new Error("takeTogether: the parts are counted in different places");
  return counter.decide(
    parts.map((p) => p.take),
    take,
  );
}
