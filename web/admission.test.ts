/**
 * Admission (web/admission.ts, docs/architecture.md#traffic), as far as a page's early start reads it
 * (docs/decisions.md#cold-pages): whether the lookup starts a fetch, and what it spends.
 */
import { describe, expect, it } from "vitest";
import type { Probe } from "ident-resolver";
import type { SearchResponse } from "ident-resolver";
import { createWindows, trafficSettings } from "ident-resolver/traffic";
import { createOutboundCount } from "ident-resolver/traffic";
import { createSearchGate } from "ident-resolver/traffic";
import { admit, admitAs, currentClient, type AdmissionDeps } from "./admission";
import { bridge } from "./bridge";
import type { RequestContext } from "./decision";

const ANSWER = { schema: "answer", query: {}, results: [], problems: [] } as unknown as SearchResponse;
const QUERY = { input: "alice.example", kind: "domain", domain: "alice.example" } as const;

function deps(probe: Probe) {
  const settings = trafficSettings({});
  const windows = createWindows(settings);
  const refused: string[] = [];
  const d = {
    resolver: {
      probe: async () => probe,
      traffic: {
        settings,
        windows,
        outbound: { full: () => false, retryAfterS: 1, max: 64, stats: () => ({}) },
        searches: createSearchGate({ atOnce: 4, waiting: 16, perClient: 2 }),
      },
      metrics: { refusals: { inc: ({ limit }: { limit: string }) => void refused.push(limit) } },
    },
    clientOf: () => "203.0.113.7",
  } as unknown as AdmissionDeps;
  return { d, windows, settings, refused };
}

describe("admit: whether a lookup starts a fetch", () => {
  it("answered from the cache: cached, starts nothing, spends no cold lookup", async () => {
    const { d, windows, settings } = deps({ state: "cached", response: ANSWER, until: Infinity });
    expect(await admit(d, QUERY, "203.0.113.7", false)).toEqual({
      ok: true,
      refresh: { asked: false, granted: false },
      cached: ANSWER,
      client: "203.0.113.7",
      starts: false,
    });
    expect((await windows.coldLookups.usage("203.0.113.7")).remaining).toBe(settings.coldLookups);
  });
  it("joining a fetch in flight: starts nothing, spends no cold lookup", async () => {
    const { d, windows, settings } = deps({ state: "joining" });
    expect(await admit(d, QUERY, "203.0.113.7", false)).toMatchObject({ ok: true, cached: null, starts: false });
    expect((await windows.coldLookups.usage("203.0.113.7")).remaining).toBe(settings.coldLookups);
  });
  it("cold, or a refresh granted: starts a fetch, and spends one of the client's cold lookups", async () => {
    const cold = deps({ state: "cold" });
    expect(await admit(cold.d, QUERY, "203.0.113.7", false)).toMatchObject({ ok: true, cached: null, starts: true });
    expect((await cold.windows.coldLookups.usage("203.0.113.7")).remaining).toBe(cold.settings.coldLookups - 1);
    const refresh = deps({ state: "cached", response: ANSWER, until: Infinity });
    expect(await admit(refresh.d, QUERY, "203.0.113.7", true)).toMatchObject({
      ok: true,
      refresh: { asked: true, granted: true },
      cached: null,
      starts: true,
    });
  });
});

describe("admitAs: a request admitted as its row says (web/routes.ts `admission`), whatever its handler", () => {
  const CLIENT = "203.0.113.7";
  const LOOKUP = { query: QUERY, refresh: false, refreshRequired: false };
  it("a row with no admission: taken, and nothing spent, even when its handler says what a lookup would ask", async () => {
    const { d, windows, settings } = deps({ state: "cold" });
    expect(await admitAs(d, null, CLIENT, LOOKUP)).toEqual({ ok: true, lookup: null });
    expect((await windows.coldLookups.usage(CLIENT)).remaining).toBe(settings.coldLookups);
    expect((await windows.searches.usage(CLIENT)).remaining).toBe(settings.searches);
  });
  it("a search's row: one of the client's searches, and its refusal when they are spent", async () => {
    const { d, windows, settings, refused } = deps({ state: "cold" });
    expect(await admitAs(d, "search", CLIENT, null)).toEqual({ ok: true, lookup: null });
    expect((await windows.searches.usage(CLIENT)).remaining).toBe(settings.searches - 1);
    for (let i = 1; i < settings.searches; i++) await admitAs(d, "search", CLIENT, null);
    // Answered a second late, as every refusal of a client's own limit is.
    expect(await admitAs(d, "search", CLIENT, null)).toMatchObject({ ok: false, refused: { refused: "searches" } });
    expect(refused).toEqual(["searches"]);
  });
  it("a lookup's row: the lookup its handler asks, admitted; the check's asks a refresh whatever the handler says", async () => {
    const lookup = deps({ state: "cached", response: ANSWER, until: Infinity });
    expect(await admitAs(lookup.d, "lookup", CLIENT, LOOKUP)).toMatchObject({ ok: true, lookup: { cached: ANSWER, starts: false } });
    const check = deps({ state: "cached", response: ANSWER, until: Infinity });
    expect(await admitAs(check.d, "check", CLIENT, LOOKUP)).toMatchObject({
      ok: true,
      lookup: { refresh: { asked: true, granted: true }, cached: null, starts: true },
    });
    expect((await check.windows.refreshes.usage(CLIENT)).remaining).toBe(check.settings.refreshes - 1);
  });
  it("a lookup's row whose handler gives no query is a fault of the code, not a request admitted unchecked", async () => {
    const { d } = deps({ state: "cold" });
    await expect(admitAs(d, "lookup", CLIENT, null)).rejects.toThrow(/no query to admit/);
  });
});

describe("admit: the outbound queue's bound is fair (docs/architecture.md#fair-queues)", () => {
  /** Admission against a real outbound count holding `pending` fetches, for a client with `inProgress` lookups (this one included). */
  async function admitAt(pending: number, inProgress: number) {
    const count = createOutboundCount({ max: 64, maxQueued: 256, maxWaitMs: 10_000 });
    for (let i = 0; i < pending; i++) count.enter();
    const { d, refused } = deps({ state: "cold" });
    const fair = Object.assign({}, d, { lookupsInProgress: () => inProgress });
    (fair.resolver.traffic as { outbound: unknown }).outbound = count;
    return { admission: await admit(fair, QUERY, "203.0.113.7", false), refused };
  }
  it("a client with no other lookup in progress is taken until the whole bound (320) is reached", async () => {
    expect((await admitAt(319, 1)).admission).toMatchObject({ ok: true, starts: true });
    expect((await admitAt(320, 1)).admission).toMatchObject({ ok: false, refused: { refused: "busy" } });
  });
  it("a client with lookups in progress already is refused a quarter earlier (at 240), in words that say why", async () => {
    expect((await admitAt(239, 2)).admission).toMatchObject({ ok: true });
    const { admission, refused } = await admitAt(240, 2);
    expect(admission).toMatchObject({
      ok: false,
      refused: { refused: "busy", message: expect.stringMatching(/no lookup in progress \(you have 1 more\)/) },
    });
    expect(refused).toEqual(["busy"]);
  });
});

describe("the client of a request is the one the server decided (web/server.ts), never worked out again", () => {
  it("currentClient: the request context's client; outside a request, the client of no address", () => {
    const seen: (string | null)[] = [];
    const d = { clientOf: (forwardedFor: string | null) => (seen.push(forwardedFor), "nobody") };
    const context = { client: "198.51.100.7", forwardedFor: "203.0.113.99, 198.51.100.7" } as unknown as RequestContext;
    expect(bridge().requests.run(context, () => currentClient(d))).toBe("198.51.100.7");
    expect(seen).toEqual([]);
    expect(currentClient(d)).toBe("nobody");
    expect(seen).toEqual([null]);
  });
});
