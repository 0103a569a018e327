/**
 * Every per-minute limit the declarations count for the fleet (docs/architecture.md#traffic), on a
 * real Redis (Debian's redis-server in a temporary folder): reached by two instances together at its
 * declared value, sliding with the clock, and, with Redis down, counted by each instance alone
 * without failing or waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULTS } from "ident-resolver";
import { connectRedis, type FleetLink } from "ident-resolver/redis";
import { createWindows, fetchBudgets, trafficSettings, WINDOW_NAMES } from "ident-resolver/traffic";
import { LIMITS, windowSpanMs, type LimitDeclaration } from "ident-resolver/traffic";
import { startRedis, type RedisServer } from "../helpers/redis";

let redis: RedisServer;
const links: FleetLink[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.all(links.map((l) => l.close()));
  await redis?.stop();
});

const defaults = trafficSettings();
let run = 0;

/** Two instances' windows on one Redis, with a clock of the test's own and keys of their own. */
async function twoInstances(now: () => number) {
  const prefix = `test${run++}:`;
  const [a, b] = [connectRedis(redis.url, { log: () => undefined }), connectRedis(redis.url, { log: () => undefined })];
  links.push(a, b);
  expect((await a.ping()) && (await b.ping())).toBe(true);
  return [
    createWindows(defaults, { link: a, keyPrefix: prefix }, now),
    createWindows(defaults, { link: b, keyPrefix: prefix }, now),
  ] as const;
}

describe.each(WINDOW_NAMES.filter((name) => LIMITS[name].fleet))("for the fleet: %s", (name) => {
  const limit = defaults[name];
  const declared: LimitDeclaration = LIMITS[name];
  it(`${LIMITS[name].default} in any ${LIMITS[name].per} for both instances together; room comes back as the window slides`, async () => {
    let t = 1_000_000;
    const [a, b] = await twoInstances(() => t);
    for (let i = 0; i < limit; i++) expect(await (i % 2 ? a : b)[name].take("k")).toEqual({ ok: true });
    expect(await a[name].take("k")).toMatchObject({ ok: false });
    const span = windowSpanMs(declared, DEFAULTS.fetchTimeoutMs);
    expect(await b[name].check("k")).toEqual({ ok: false, retryAfterS: span / 1000 });
    expect(await b[name].take("another")).toEqual({ ok: true });
    t += span - 1;
    expect(await a[name].take("k")).toMatchObject({ ok: false });
    t += 1;
    expect(await a[name].take("k")).toEqual({ ok: true });
  });
  it("usage (the API's RateLimit header) is the fleet's: takes on either instance, counting nothing", async () => {
    let t = 3_000_000;
    const [a, b] = await twoInstances(() => t);
    const span = windowSpanMs(declared, DEFAULTS.fetchTimeoutMs);
    expect(await b[name].usage("k")).toEqual({ limit, windowS: span / 1000, remaining: limit, resetS: 0 });
    await a[name].take("k");
    const step = Math.round(span / 2000) * 1000;
    t += step;
    await b[name].take("k");
    expect(await b[name].usage("k")).toEqual({ limit, windowS: span / 1000, remaining: limit - 2, resetS: (span - step) / 1000 });
    expect(await a[name].usage("k")).toMatchObject({ remaining: limit - 2 });
  });
  it("Redis down: each instance counts alone, and never fails", async () => {
    const t = 2_000_000;
    const [a, b] = await twoInstances(() => t);
    await redis.pause();
    try {
      for (let i = 0; i < limit; i++) expect(await a[name].take("k")).toEqual({ ok: true });
      expect(await a[name].take("k")).toMatchObject({ ok: false });
      expect(await b[name].take("k")).toEqual({ ok: true });
    } finally {
      await redis.resume();
    }
  });
});

describe("a fetch's budgets in Redis, taken together", () => {
  it("two instances spending at once at a budget's edge pass exactly as many as it allows; the refused spend nothing", async () => {
    const settings = trafficSettings({
      hostPerMinute: 3,
      hostSharePerMinute: 3,
      addressPerMinute: 4,
      addressSharePerMinute: 4,
      addressPerTenSeconds: 4,
    });
    const prefix = `together${run++}:`;
    const [la, lb] = [connectRedis(redis.url, { log: () => undefined }), connectRedis(redis.url, { log: () => undefined })];
    links.push(la, lb);
    expect((await la.ping()) && (await lb.ping())).toBe(true);
    const t = 3_000_000;
    const [a, b] = [
      fetchBudgets(
        createWindows(settings, { link: la, keyPrefix: prefix }, () => t),
        settings,
      ),
      fetchBudgets(
        createWindows(settings, { link: lb, keyPrefix: prefix }, () => t),
        settings,
      ),
    ];
    const target = { host: "edge.example", address: "192.0.2.9", client: "c" };
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b)(target)));
    expect(outcomes.filter((o) => o === null)).toHaveLength(3);
    expect(outcomes.filter((o) => o?.refused === "host_budget")).toHaveLength(7);
    expect(await a({ host: "other.example", address: "192.0.2.9", client: "d" })).toBeNull();
    expect(await b({ host: "third.example", address: "192.0.2.9", client: "e" })).toMatchObject({ refused: "address_budget" });
  });
});
