import { describe, expect, it } from "vitest";
import { createLocalCounter, limiterOn } from "./window.ts";

/** One limit alone, on a counter of its own. */
const createWindowLimiter = (o: { limit: number; windowMs: number; now: () => number }) =>
  limiterOn(createLocalCounter({ now: o.now }), "limit", o.limit, o.windowMs);

describe("sliding-window limit (docs/architecture.md#traffic)", () => {
  it("allows `limit` in any window per key, then says when to retry", async () => {
    let t = 0;
    const { take } = createWindowLimiter({ limit: 2, windowMs: 10_000, now: () => t });
    expect((await Promise.all([take("a"), take("a"), take("b")])).every((d) => d.ok)).toBe(true);
    expect(await take("a")).toEqual({ ok: false, retryAfterS: 10 });
    t = 10_000;
    expect((await take("a")).ok).toBe(true);
  });
  it("usage says what is left and when the oldest take leaves, counting nothing (the API's RateLimit header)", async () => {
    let t = 0;
    const limiter = createWindowLimiter({ limit: 3, windowMs: 60_000, now: () => t });
    expect(await limiter.usage("a")).toEqual({ limit: 3, windowS: 60, remaining: 3, resetS: 0 });
    await limiter.take("a");
    t = 20_000;
    await limiter.take("a");
    t = 30_500;
    expect(await limiter.usage("a")).toEqual({ limit: 3, windowS: 60, remaining: 1, resetS: 30 });
    expect(await limiter.usage("a")).toEqual({ limit: 3, windowS: 60, remaining: 1, resetS: 30 });
    await limiter.take("a");
    expect(await limiter.usage("a")).toMatchObject({ remaining: 0 });
    t = 60_000;
    expect(await limiter.usage("a")).toEqual({ limit: 3, windowS: 60, remaining: 1, resetS: 20 });
  });
  it("check answers as take would, and counts nothing", async () => {
    let t = 0;
    const limiter = createWindowLimiter({ limit: 1, windowMs: 60_000, now: () => t });
    expect(await limiter.check("a")).toEqual({ ok: true });
    expect(await limiter.check("a")).toEqual({ ok: true });
    expect(await limiter.take("a")).toEqual({ ok: true });
    t = 15_000;
    expect(await limiter.check("a")).toEqual({ ok: false, retryAfterS: 45 });
  });
  it("no burst at a window's edge: 2 at 59 s and 2 more at 61 s are not all allowed", async () => {
    let t = 59_000;
    const { take } = createWindowLimiter({ limit: 3, windowMs: 60_000, now: () => t });
    expect((await take("a")).ok && (await take("a")).ok).toBe(true);
    t = 61_000;
    expect((await take("a")).ok).toBe(true);
    expect(await take("a")).toEqual({ ok: false, retryAfterS: 58 });
    t = 119_000;
    expect((await take("a")).ok).toBe(true);
  });
});
