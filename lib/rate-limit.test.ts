import { describe, expect, it } from "vitest";
import { createRateLimiter } from "./rate-limit";

describe("fixed-window rate limit (docs/decisions.md#caching, docs/decisions.md#outbound-work)", () => {
  it("allows `limit` per window per key, then says when to retry", async () => {
    let t = 0;
    const { take } = createRateLimiter({ limit: 2, windowMs: 10_000, now: () => t });
    expect((await Promise.all([take("a"), take("a"), take("b")])).every((d) => d.ok)).toBe(true);
    expect(await take("a")).toEqual({ ok: false, retryAfterS: 10 });
    t = 10_000;
    expect((await take("a")).ok).toBe(true);
  });
  it("check answers as take would, and counts nothing", async () => {
    let t = 0;
    const limiter = createRateLimiter({ limit: 1, windowMs: 60_000, now: () => t });
    expect(await limiter.check("a")).toEqual({ ok: true });
    expect(await limiter.check("a")).toEqual({ ok: true });
    expect(await limiter.take("a")).toEqual({ ok: true });
    t = 15_000;
    expect(await limiter.check("a")).toEqual({ ok: false, retryAfterS: 45 });
  });
});
