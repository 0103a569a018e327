/**
 * Every limit of the traffic room, tested from its own declaration (docs/architecture.md#traffic):
 * reached at its declared value, the window passing, and Redis down. The limits counted in Redis are
 * tested against a real one in test/integration/fleet.test.ts; those on requests in progress in
 * web/shed.test.ts.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { DEFAULTS } from "../limits.ts";
import { describe, expect, it } from "vitest";
import { createResolverCore } from "../resolver/index.ts";
import type { FetchOutcome } from "../fetch/outcome.ts";
import { REFUSAL_WORDS } from "./answer.ts";
import { createAtOnceLimiter } from "./at-once.ts";
import { createWindows, fetchBudgets, WINDOW_NAMES, type FetchTarget } from "./index.ts";
import {
  isLimitName,
  LIMIT_NAMES,
  LIMITS,
  MINUTE_MS,
  refusedAt,
  trafficSettings,
  windowSpanMs,
  type LimitDeclaration,
  type LimitName,
} from "./limits.ts";
import { createOutboundGate } from "./outbound.ts";
import { REFUSAL_KINDS } from "./refusal.ts";
import type { RedisLink } from "./shared-window.ts";

const declared = (name: LimitName): LimitDeclaration => LIMITS[name];
const defaults = trafficSettings();
/** A link to a Redis that is down: every command fails (lib/redis.ts answers null). */
const redisDown: RedisLink = { run: async () => null };

describe("declarations", () => {
  it.each(LIMIT_NAMES)("%s: counts something, has a default, a refusal with words, and derives from a limit that exists", (name) => {
    const d = declared(name);
    expect(d.default).toBeGreaterThan(0);
    expect(REFUSAL_KINDS).toContain(d.refused);
    expect(REFUSAL_WORDS[d.refused].heading).not.toBe("");
    if (d.derived) expect(isLimitName(d.derived.from)).toBe(true);
    // A derived limit's declared default is what it derives to at the others' defaults.
    expect(defaults[name]).toBe(d.default);
    if (d.variable) expect(d.variable.min).toBeLessThanOrEqual(d.default);
  });
  it("docs/architecture.md's table names every limit with its variable and default", () => {
    const doc = readFileSync(new URL("../../docs/architecture.md", import.meta.url), "utf8");
    for (const name of LIMIT_NAMES) {
      const d = declared(name);
      const row = doc.split("\n").find((line) => line.startsWith(`| [\`${name}\`](../lib/traffic/limits.ts)`));
      expect(row, name).toBeDefined();
      expect(row).toContain(d.default.toLocaleString("en-US"));
      if (d.variable) expect(row).toContain(d.variable.name);
    }
  });
});

describe("refusedAt: the refusal a client meets at a limit is the one its declaration names", () => {
  it.each(LIMIT_NAMES)("%s", (name) => {
    expect(refusedAt(name, "why", 3)).toEqual({ refused: LIMITS[name].refused, message: "why", retryAfterS: 3 });
  });
  it("no refusal is made in the source but through its limit (refusedAt), or as a fault of this machine", () => {
    const root = new URL("../../", import.meta.url);
    const files = execFileSync("git", ["ls-files", "lib", "web", "app", "components", "cli"], { cwd: root, encoding: "utf8" })
      .split("\n")
      .filter((f) => /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f) && f !== "lib/traffic/refusal.ts" && f !== "lib/traffic/limits.ts");
    const made = files.flatMap((f) =>
      [...readFileSync(new URL(f, root), "utf8").matchAll(/\brefusal\(\s*"([a-z_]+)"/g)].map((m) => `${f}: ${m[1]}`),
    );
    // What no limit declares: this machine out of descriptors or memory, a thread gone, a page nobody admitted.
    expect(
      made.every((m) => /: (?:local_fault|busy)$/.test(m) && /fetcher|thread|page-request/.test(m)),
      made.join("\n"),
    ).toBe(true);
  });
});

describe.each(WINDOW_NAMES)("per window: %s", (name) => {
  const limit = defaults[name];
  // A limit on requests sent counts each one its window and a margin (the time to reach the publisher).
  const span = windowSpanMs(declared(name), DEFAULTS.fetchTimeoutMs);
  it(`allows ${LIMITS[name].default} in any ${LIMITS[name].per}, then refuses with when to retry; check counts nothing`, async () => {
    let t = 0;
    const window = createWindows(defaults, null, () => t)[name];
    for (let i = 0; i < limit; i++) {
      expect(await window.check("k")).toEqual({ ok: true });
      expect(await window.take("k")).toEqual({ ok: true });
      t += 1; // spread over the first part of the window
    }
    expect(await window.take("k")).toEqual({ ok: false, retryAfterS: expect.any(Number) });
    const refused = await window.check("k");
    expect(refused.ok === false && refused.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(refused.ok === false && refused.retryAfterS).toBeLessThanOrEqual(span / 1000);
    expect(await window.take("another")).toEqual({ ok: true });
  });
  it(`the window slides${declared(name).countsSends ? " (a minute and the fetch deadline)" : ""}: room comes back as the first takes leave it, never a whole window's worth at its edge`, async () => {
    let t = 0;
    const window = createWindows(defaults, null, () => t)[name];
    for (let i = 0; i < limit; i++) await window.take("k");
    t = span - 1;
    expect((await window.take("k")).ok).toBe(false);
    t = span;
    expect(await window.take("k")).toEqual({ ok: true });
    // All the others were taken at the same moment: they leave together.
    expect((await window.take("k")).ok).toBe(limit > 1);
  });
  it(LIMITS[name].fleet ? "Redis down: each instance counts alone, never fails" : "counted by each instance alone", async () => {
    const t = 0;
    const fleet = { link: redisDown, keyPrefix: "test:" };
    const [a, b] = [createWindows(defaults, fleet, () => t)[name], createWindows(defaults, fleet, () => t)[name]];
    for (let i = 0; i < limit; i++) expect(await a.take("k")).toEqual({ ok: true });
    expect((await a.take("k")).ok).toBe(false);
    // The other instance's own count is untouched: the limit fails open to one instance's share.
    expect(await b.take("k")).toEqual({ ok: true });
  });
});

describe("fetch budgets: the host name's minute, the address's, and the client's share of each", () => {
  const target = (i: number, client = "c"): FetchTarget => ({ host: `h${i}.example`, address: "192.0.2.1", client });
  it(`an address's minute is ${defaults.addressPerMinute} for all clients together, past it address_budget`, async () => {
    let t = 0;
    const spend = fetchBudgets(
      createWindows(defaults, null, () => t),
      defaults,
    );
    const clients = Math.ceil(defaults.addressPerMinute / defaults.addressSharePerMinute);
    for (let i = 0; i < defaults.addressPerMinute; i++) {
      // Spread as the 10 s windows allow (the test below): a quarter of the minute every 10 s.
      t = Math.floor(i / defaults.addressPerTenSeconds) * 10_000;
      expect(await spend(target(i, `c${i % clients}`))).toBeNull();
    }
    expect(await spend(target(0, "newcomer"))).toMatchObject({
      refused: "address_budget",
      message: expect.stringMatching(/^the server of h0\.example \(192\.0\.2\.1\) has had the 1200 requests a minute/),
    });
  });
  it(`an address's minute is spread: at most ${defaults.addressPerTenSeconds} (a quarter) in any 10 s, whoever asks; the next 10 s have room`, async () => {
    let t = 0;
    const spend = fetchBudgets(
      createWindows(defaults, null, () => t),
      defaults,
    );
    for (let i = 0; i < defaults.addressPerTenSeconds; i++) expect(await spend(target(i, `c${i}`))).toBeNull();
    expect(await spend(target(0, "newcomer"))).toMatchObject({
      refused: "address_budget",
      retryAfterS: 10,
      message: expect.stringMatching(/^the server of h0\.example \(192\.0\.2\.1\) has had 300 requests in 10 s from this resolver/),
    });
    t = 10_000;
    expect(await spend(target(0, "newcomer"))).toBeNull();
  });
  it(`one client has at most ${defaults.addressSharePerMinute} of it (a quarter); others still get through`, async () => {
    let t = 0;
    const spend = fetchBudgets(
      createWindows(defaults, null, () => t),
      defaults,
    );
    // Half in each of two 10 s windows, so the spread leaves room for another client.
    for (let i = 0; i < defaults.addressSharePerMinute; i++) {
      t = i < defaults.addressSharePerMinute / 2 ? 0 : 10_000;
      expect(await spend(target(i))).toBeNull();
    }
    expect(await spend(target(0))).toMatchObject({
      refused: "client_share",
      message: expect.stringMatching(
        /^your lookups have had their share \(300 a minute\) of the requests this resolver sends the server of h0\.example \(192\.0\.2\.1\)/,
      ),
    });
    expect(await spend(target(0, "other"))).toBeNull();
  });
  it(`one client has at most ${defaults.hostSharePerMinute} of a host name's minute (a quarter); others still get through`, async () => {
    const spend = fetchBudgets(
      createWindows(defaults, null, () => 0),
      defaults,
    );
    const on = (i: number, client = "c") => ({ host: "big.example", address: `192.0.2.${i % 200}`, client });
    for (let i = 0; i < defaults.hostSharePerMinute; i++) expect(await spend(on(i))).toBeNull();
    expect(await spend(on(0))).toMatchObject({
      refused: "client_share",
      message: expect.stringMatching(
        /^your lookups have had their share \(75 a minute\) of the requests this resolver sends big\.example;/,
      ),
    });
    expect(await spend(on(0, "other"))).toBeNull();
  });
  it("at a budget's edge, fetches spending at once pass exactly as many as it allows, and those refused spend nothing", async () => {
    const settings = trafficSettings({
      hostPerMinute: 2,
      hostSharePerMinute: 2,
      addressPerMinute: 3,
      addressSharePerMinute: 3,
      addressPerTenSeconds: 3,
    });
    const windows = createWindows(settings, null, () => 0);
    const spend = fetchBudgets(windows, settings);
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => spend({ host: "edge.example", address: "192.0.2.7", client: "c" })));
    expect(outcomes.filter((o) => o === null)).toHaveLength(2);
    expect(outcomes.filter((o) => o?.refused === "host_budget")).toHaveLength(4);
    // The four refused spent none of the address's minute: one more fetch to it fits, then none.
    expect(await spend({ host: "other.example", address: "192.0.2.7", client: "d" })).toBeNull();
    expect(await spend({ host: "third.example", address: "192.0.2.7", client: "e" })).toMatchObject({ refused: "address_budget" });
  });
  it(`one host name has ${defaults.hostPerMinute} a minute, past it host_budget; a refusal spends nothing`, async () => {
    let t = 0;
    const windows = createWindows(defaults, null, () => t);
    const spend = fetchBudgets(windows, defaults);
    for (let i = 0; i < defaults.hostPerMinute; i++)
      expect(await spend({ host: "big.example", address: `192.0.2.${i % 200}`, client: `c${i}` })).toBeNull();
    expect(await spend({ host: "big.example", address: "198.51.100.1", client: "x" })).toMatchObject({ refused: "host_budget" });
    expect(await windows.addressPerMinute.check("198.51.100.1")).toEqual({ ok: true });
    t = MINUTE_MS + DEFAULTS.fetchTimeoutMs;
    expect(await spend({ host: "big.example", address: "198.51.100.1", client: "x" })).toBeNull();
  });
});

describe.each(["hostAtOnce", "addressAtOnce"] as const)("at once: %s", (name) => {
  it(`runs at most ${LIMITS[name].default} together per key; the next runs when one ends`, async () => {
    const run = createAtOnceLimiter(defaults[name]);
    let active = 0;
    let peak = 0;
    const releases: (() => void)[] = [];
    const task = () =>
      run("k", async () => {
        peak = Math.max(peak, ++active);
        await new Promise<void>((resolve) => releases.push(resolve));
        active--;
      });
    const all = Array.from({ length: defaults[name] + 1 }, task);
    await new Promise((r) => setTimeout(r, 0));
    expect(peak).toBe(defaults[name]);
    expect(run.load("k")).toBe(defaults[name] + 1);
    while (releases.length > 0) {
      releases.shift()?.();
      await new Promise((r) => setTimeout(r, 0));
    }
    await Promise.all(all);
    expect(run.load("k")).toBe(0);
  });
});

describe("outbound and outboundQueue", () => {
  it(`${defaults.outbound} in flight, ${defaults.outboundQueue} waiting, then busy with when to retry`, async () => {
    const gate = createOutboundGate({ max: defaults.outbound, maxQueued: defaults.outboundQueue, maxWaitMs: 10_000 });
    const tickets = Array.from({ length: defaults.outbound + defaults.outboundQueue }, () => gate.enter());
    expect(tickets.every((t) => !("refused" in t))).toBe(true);
    expect(gate.enter()).toMatchObject({ refused: "busy", retryAfterS: 10 });
    for (const t of tickets) if (!("refused" in t)) t.leave();
    expect(gate.full()).toBe(false);
  });
});

describe("fetchesPerQuery", () => {
  it(`one query starts at most ${LIMITS.fetchesPerQuery.default} fetches; the claims past it are not_checked query_budget`, async () => {
    const ALICE = "§:entity:alice.example";
    const properties = Array.from({ length: 50 }, (_, i) => ({ id: `§:property:p${i}.example` }));
    const credentials = Array.from({ length: 50 }, (_, i) => ({ id: `@alice@c${i}.example` }));
    let calls = 0;
    const fetch = async (url: string): Promise<FetchOutcome> => {
      calls++;
      const meta = { url, finalUrl: url, contentType: "application/json", ms: 1 };
      if (url === "https://alice.example/ident.json") {
        const body = JSON.stringify({ network_id: ALICE, properties, credentials });
        return Object.assign(meta, { ok: true as const, status: "found" as const, httpStatus: 200 as const, body, bytes: body.length });
      }
      return Object.assign(meta, { ok: false as const, status: "not_found" as const, httpStatus: 404, message: "404" });
    };
    // Each claim costs two fetches (its JSON URL, then its HTML fallback): 1 + 2 × 100 = 201 would be all.
    const limit = 41;
    const r = await createResolverCore({ fetch, limits: { maxFetchesPerQuery: limit } }).resolveEntity("alice.example");
    expect(calls).toBe(limit);
    const claims = "refused" in r ? [] : [...r.properties, ...r.credentials];
    expect(claims.filter((c) => c.not_checked === "query_budget").length).toBeGreaterThan(0);
    expect(defaults.fetchesPerQuery).toBe(LIMITS.fetchesPerQuery.default);
  });
});
