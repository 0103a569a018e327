import { describe, expect, it } from "vitest";
import { clientKey, createRateLimiter } from "./rate-limit";

describe("refresh rate limit (docs/decisions.md#caching)", () => {
  it("allows `limit` per window per client, then says when to retry", () => {
    let t = 0;
    const take = createRateLimiter({ limit: 2, windowMs: 10_000, now: () => t });
    expect([take("a"), take("a"), take("b")].every((d) => d.ok)).toBe(true);
    expect(take("a")).toEqual({ ok: false, retryAfterS: 10 });
    t = 10_000;
    expect(take("a").ok).toBe(true);
  });
});

describe("clientKey: the rightmost trusted hop", () => {
  it.each([
    ["203.0.113.9", 0, "203.0.113.9"],
    ["1.1.1.1, 203.0.113.9", 0, "203.0.113.9"],
    ["spoofed, 198.51.100.7, 10.0.0.2", 1, "198.51.100.7"],
    ["spoofed, 198.51.100.7", 0, "198.51.100.7"],
    ["", 0, "unknown"],
    [null, 0, "unknown"],
  ] as const)("%j with %d trusted hops → %s", (xff, hops, expected) => {
    expect(clientKey(xff, hops)).toBe(expected);
  });
  it("a client cannot choose its key by writing X-Forwarded-For", () => {
    expect(clientKey("victim, 203.0.113.9", 0)).toBe("203.0.113.9");
  });
});
