/**
 * Bounded outbound work over real HTTPS on loopback (docs/architecture.md#traffic): 6 at a time to one
 * host name and 32 to one address however many names point at it, each address's minute and each
 * client's share of it, the per-host budget a minute (redirect hops included), the outbound cap, a
 * deadline that starts when the fetch does, and this machine's faults kept apart from the publisher's.
 */
import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { parseConnectTo } from "ident-resolver/node";
import { createWindows, fetchBudgets, trafficSettings, type LimitName } from "ident-resolver/traffic";
import { createOutboundGate } from "ident-resolver/traffic";
import { useSampleNetwork } from "../helpers/sample";

const S = "\u00a7";
const NAMES = Array.from({ length: 30 }, (_, i) => `n${i}.victim.test`);
/** More names than one address takes at once, each answering slowly enough that all are in flight together. */
const WIDE = Array.from({ length: 40 }, (_, i) => `w${i}.victim.test`);
const entity = (domain: string) => JSON.stringify({ network_id: `${S}:entity:${domain}` });
const extraSites: Record<string, { files: Record<string, string>; routes?: Record<string, { delay_ms?: number; redirect?: string }> }> =
  Object.fromEntries(NAMES.map((name) => [name, { files: { "/ident.json": entity(name) }, routes: { "/ident.json": { delay_ms: 80 } } }]));
for (const name of WIDE) extraSites[name] = { files: { "/ident.json": entity(name) }, routes: { "/ident.json": { delay_ms: 600 } } };
extraSites["slow.test"] = { files: { "/ident.json": entity("slow.test") }, routes: { "/ident.json": { delay_ms: 500 } } };
extraSites["hop.test"] = { files: {}, routes: { "/ident.json": { redirect: "https://alice.example/ident.json" } } };

const ctx = useSampleNetwork({ extraSites });
/** Every name answers 127.0.0.1 in DNS; the policy lets only that address through, so nothing leaves loopback. */
const toLoopback = async (): Promise<LookupAddress[]> => [{ address: "127.0.0.1", family: 4 }];
const loopbackOnly = (address: string) => address === "127.0.0.1";
/** Keeps each host name (so DNS and the guard run) and sends it to the sample network's port. */
const portOnly = () => [{ host: "", port: null, connectHost: "", connectPort: ctx.net.port }];
/** The per-minute budgets of a fetcher, with some limits set. */
const budgets = (set: Partial<Record<LimitName, number>>) => {
  const settings = trafficSettings(set);
  return fetchBudgets(createWindows(settings), settings);
};

describe("at once: 6 per host name, 32 per IP address", () => {
  it("40 names that resolve to one address: never more than 32 requests at once reach it, and all are answered", async () => {
    const fetch = ctx.fetcher({ connectTo: portOnly(), resolve: toLoopback, isAllowed: loopbackOnly });
    ctx.net.resetCounts();
    const outcomes = await Promise.all(WIDE.map((name) => fetch(`https://${name}/ident.json`, "json")));
    expect(outcomes.every((o) => "ok" in o && o.ok)).toBe(true);
    expect(ctx.net.peakTotal()).toBe(32);
  });
  it("names sent by IDENT_CONNECT_TO to one address count against that address", async () => {
    const one = parseConnectTo(ctx.net.connectToOne);
    const fetch = ctx.fetcher({ connectTo: one.ok ? one.entries : [] });
    ctx.net.resetCounts();
    await Promise.all(WIDE.map((name) => fetch(`https://${name}/ident.json`, "json")));
    expect(ctx.net.peakTotal()).toBe(32);
  });
  it("one host name: never more than 6 at once", async () => {
    const fetch = ctx.fetcher({ connectTo: portOnly(), resolve: toLoopback, isAllowed: loopbackOnly });
    ctx.net.resetCounts();
    await Promise.all(Array.from({ length: 20 }, () => fetch(`https://${WIDE[0]}/ident.json`, "json")));
    expect(ctx.net.peakInFlight.get(WIDE[0] ?? "")).toBe(6);
  });
});

describe("an address's minute (IDENT_ADDRESS_BUDGET_PER_MIN), and each client's share of it", () => {
  it("past the address's budget, fetches to any name on it are refused before any request, with when to retry", async () => {
    const fetch = ctx.fetcher({
      connectTo: portOnly(),
      resolve: toLoopback,
      isAllowed: loopbackOnly,
      budgets: budgets({ addressPerMinute: 8, addressSharePerMinute: 100, addressPerTenSeconds: 100 }),
    });
    ctx.net.resetCounts();
    const outcomes = await Promise.all(
      NAMES.slice(0, 12).map((name, i) => fetch(`https://${name}/ident.json`, "json", { client: `c${i}` })),
    );
    expect(outcomes.filter((o) => "ok" in o && o.ok)).toHaveLength(8);
    expect(outcomes.filter((o) => "refused" in o)).toEqual(
      Array(4).fill({ refused: "address_budget", retryAfterS: expect.any(Number), message: expect.stringContaining("127.0.0.1") }),
    );
    expect([...ctx.net.requests.values()].reduce((a, b) => a + b, 0)).toBe(8);
  });
  it("one client takes at most its share of an address's minute; another client still gets through", async () => {
    const fetch = ctx.fetcher({
      connectTo: portOnly(),
      resolve: toLoopback,
      isAllowed: loopbackOnly,
      budgets: budgets({ addressPerMinute: 20, addressPerTenSeconds: 20 }),
    });
    // The share is a quarter of the address's minute: 5 of 20.
    const greedy = await Promise.all(NAMES.slice(0, 8).map((name) => fetch(`https://${name}/ident.json`, "json", { client: "greedy" })));
    expect(greedy.filter((o) => "ok" in o && o.ok)).toHaveLength(5);
    expect(greedy.filter((o) => "refused" in o)).toEqual(
      Array(3).fill(
        expect.objectContaining({
          refused: "client_share",
          message: expect.stringMatching(/^your lookups have had their share \(5 a minute\)/),
        }),
      ),
    );
    expect(await fetch(`https://${NAMES[10]}/ident.json`, "json", { client: "other" })).toMatchObject({ ok: true });
  });
});

describe("per-host budget a minute (IDENT_HOST_BUDGET_PER_MIN)", () => {
  it("past the budget a fetch is refused before any request, with when to retry", async () => {
    const fetch = ctx.fetcher({ budgets: budgets({ hostPerMinute: 3, hostSharePerMinute: 3 }) });
    ctx.net.resetCounts();
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => fetch("https://alice.example/ident.json", "json")));
    expect(outcomes.filter((o) => "ok" in o && o.ok)).toHaveLength(3);
    expect(outcomes.filter((o) => "refused" in o)).toEqual(
      Array(2).fill(expect.objectContaining({ refused: "host_budget", retryAfterS: expect.any(Number) })),
    );
    expect(ctx.net.requests.get("alice.example/ident.json")).toBe(3);
  });
  it("one client takes at most its share of a host name's minute (a quarter); another client still gets through", async () => {
    const fetch = ctx.fetcher({ budgets: budgets({ hostPerMinute: 8 }) });
    ctx.net.resetCounts();
    const greedy = await Promise.all(
      Array.from({ length: 4 }, () => fetch("https://alice.example/ident.json", "json", { client: "greedy" })),
    );
    expect(greedy.filter((o) => "ok" in o && o.ok)).toHaveLength(2);
    expect(greedy.filter((o) => "refused" in o)).toEqual(
      Array(2).fill(
        expect.objectContaining({ refused: "client_share", message: expect.stringMatching(/sends alice\.example; try again in \d+ s$/) }),
      ),
    );
    expect(ctx.net.requests.get("alice.example/ident.json")).toBe(2);
    expect(await fetch("https://alice.example/ident.json", "json", { client: "other" })).toMatchObject({ ok: true });
  });
  it("each redirect hop spends the budget of the host it goes to", async () => {
    const fetch = ctx.fetcher({ budgets: budgets({ hostPerMinute: 1 }) });
    expect(await fetch("https://hop.test/ident.json", "json")).toMatchObject({ ok: true, finalUrl: "https://alice.example/ident.json" });
    expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ refused: "host_budget" });
  });
});

describe("outbound cap (IDENT_MAX_OUTBOUND)", () => {
  it("never more than `max` in flight, and outbound sockets stay within it", async () => {
    const outbound = createOutboundGate({ max: 3, maxQueued: 100, maxWaitMs: 10_000 });
    const fetch = ctx.fetcher({ outbound });
    ctx.net.resetCounts();
    const outcomes = await Promise.all(NAMES.map((name) => fetch(`https://${name}/ident.json`, "json")));
    expect(outcomes.every((o) => "ok" in o && o.ok)).toBe(true);
    expect(ctx.net.peakTotal()).toBe(3);
    expect(outbound.stats()).toMatchObject({ active: 0, queued: 0, peakActive: 3 });
    expect(fetch.sockets().peak).toBeLessThanOrEqual(3);
  });
  it("timed-out fetches and a burst together: sockets stay within the cap, and nothing stalls", async () => {
    // Timed-out fetches leave sockets closing (or connected for nothing) after their slots are free;
    // the fetches given those slots and new ones arriving meanwhile all look for room at once.
    const outbound = createOutboundGate({ max: 4, maxQueued: 200, maxWaitMs: 10_000 });
    // 400 ms: a loopback fetch well within it even while another test file takes a core.
    const fetch = ctx.fetcher({ outbound, timeoutMs: 400 });
    const burst = () => NAMES.map((name, i) => fetch(i % 3 === 0 ? "https://slow.test/ident.json" : `https://${name}/ident.json`, "json"));
    const first = burst();
    await new Promise((r) => setTimeout(r, 350));
    const outcomes = await Promise.all([...first, ...burst()]);
    expect(outcomes.filter((o) => "ok" in o && !o.ok).map((o) => "status" in o && o.status)).toEqual(Array<string>(20).fill("timeout"));
    expect(fetch.sockets().peak).toBeLessThanOrEqual(4);
  });
  it("the deadline starts when the fetch gets its slot, not while it waits for one", async () => {
    const outbound = createOutboundGate({ max: 1, maxWaitMs: 10_000 });
    const fetch = ctx.fetcher({ outbound, timeoutMs: 400 });
    const slow = fetch("https://slow.test/ident.json", "json"); // holds the only slot past 400 ms, then times out
    const waited = fetch("https://alice.example/ident.json", "json");
    expect(await slow).toMatchObject({ ok: false, status: "timeout" });
    expect(await waited).toMatchObject({ ok: true });
  });
  it("past the queue's bound, refused as busy rather than queued without end", async () => {
    const outbound = createOutboundGate({ max: 1, maxQueued: 2, maxWaitMs: 10_000 });
    const fetch = ctx.fetcher({ outbound });
    const outcomes = await Promise.all(Array.from({ length: 6 }, (_, i) => fetch(`https://${NAMES[i]}/ident.json`, "json")));
    expect(outcomes.filter((o) => "ok" in o && o.ok)).toHaveLength(3);
    expect(outcomes.filter((o) => "refused" in o).map((o) => "refused" in o && o.refused)).toEqual(["busy", "busy", "busy"]);
  });
});

describe("a fault of this machine is never the publisher's", () => {
  it.each(["EMFILE", "ENFILE", "ENOMEM", "ENOBUFS"])(
    "%s while connecting is a local fault refused, not the publisher's outcome",
    async (code) => {
      const resolve = async (): Promise<LookupAddress[]> => {
        throw Object.assign(new Error(`getaddrinfo ${code}`), { code });
      };
      const fetch = ctx.fetcher({ connectTo: portOnly(), resolve, isAllowed: loopbackOnly });
      expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ refused: "local_fault", retryAfterS: 5 });
    },
  );
});
