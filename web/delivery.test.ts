/**
 * A page's results started by the proxy and taken by the page (web/delivery.ts,
 * docs/decisions.md#cold-pages): the same decision whoever starts it, each delivery taken once, and
 * none kept for ever.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ResolveOptions } from "../lib/resolver/documents";
import type { SearchResponse } from "../lib/result/record";
import { refusal } from "../lib/traffic/refusal";
import { createDeliveries, startDelivery, startEarly, type Admitted, type Delivery } from "./delivery";
import type { Page } from "./pages";

const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36";
const CRAWLER = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const ANSWER = { schema: "answer", query: {}, results: [], problems: [] } as unknown as SearchResponse;
const entityPage: Page & { kind: "entity" } = {
  kind: "entity",
  query: { input: "alice.example", kind: "domain", domain: "alice.example" },
};
const property = "\u00a7:property:alice.example";
const lookupPage: Page & { kind: "lookup" } = {
  kind: "lookup",
  query: { input: property, kind: "property_id", domain: "alice.example", id: property },
};
const cold: Admitted = { refresh: { asked: false, granted: false }, known: false, client: "203.0.113.7" };

/** A resolver that records what it was asked, with which options. */
function fakeResolver(cached: SearchResponse | null = null) {
  const calls: { method: string; opts?: ResolveOptions }[] = [];
  return {
    calls,
    peek: async () => (calls.push({ method: "peek" }), cached),
    remember: async (r: SearchResponse) => (calls.push({ method: "remember" }), r),
    resolve: async (_q: unknown, opts?: ResolveOptions) => (calls.push({ method: "resolve", ...(opts ? { opts } : {}) }), ANSWER),
    resolveEntityStaged: async (_d: string, opts?: ResolveOptions) => (
      calls.push({ method: "staged", ...(opts ? { opts } : {}) }),
      refusal("busy", "x", 1)
    ),
  };
}

describe("startDelivery: one decision, whoever starts it", () => {
  it("a page whose answer the cache has arrives whole, remembered from the index, and fetches nothing", async () => {
    const resolver = fakeResolver(ANSWER);
    const delivery = await startDelivery(resolver, entityPage, { ...cold, known: true }, BROWSER);
    expect(delivery).toEqual({ mode: "whole", response: ANSWER });
    expect(resolver.calls.map((c) => c.method)).toEqual(["peek", "remember"]);
  });
  it("a cold entity page streams to a browser (staged), and arrives whole to a crawler; the client and refresh reach the lookup", async () => {
    const resolver = fakeResolver();
    const streamed = await startDelivery(resolver, entityPage, { ...cold, refresh: { asked: true, granted: true } }, BROWSER);
    expect(streamed.mode).toBe("stream");
    expect(await (streamed as Delivery & { entity: Promise<unknown> }).entity).toEqual({
      refused: expect.objectContaining({ refused: "busy" }),
    });
    expect(resolver.calls).toEqual([{ method: "staged", opts: { refresh: true, client: "203.0.113.7" } }]);
    const whole = await startDelivery(resolver, entityPage, cold, CRAWLER);
    expect(whole).toEqual({ mode: "whole", response: ANSWER });
    expect(resolver.calls.at(-1)).toEqual({ method: "resolve", opts: { refresh: false, client: "203.0.113.7" } });
  });
  it("a property lookup streams its whole answer to a browser", async () => {
    const resolver = fakeResolver();
    const delivery = await startDelivery(resolver, lookupPage, cold, BROWSER);
    expect(delivery.mode).toBe("stream");
    expect(await (delivery as Delivery & { response: Promise<unknown> }).response).toBe(ANSWER);
  });
});

describe("deliveries parked by the proxy", () => {
  afterEach(() => void vi.useRealTimers());
  it("are taken once, by their token: a second take, an unknown or a missing token finds nothing", async () => {
    const deliveries = createDeliveries({ max: 10 });
    const delivery = Promise.resolve<Delivery>({ mode: "whole", response: ANSWER });
    const token = deliveries.park(delivery);
    expect(deliveries.take("not-a-token")).toBeUndefined();
    expect(deliveries.take(null)).toBeUndefined();
    expect(deliveries.take(token)).toBe(delivery);
    expect(deliveries.take(token)).toBeUndefined();
    expect(deliveries.size).toBe(0);
  });
  it("one never taken is dropped after its time; one that fails untaken, to its claims, is no unhandled rejection", async () => {
    vi.useFakeTimers();
    const deliveries = createDeliveries({ max: 10, keepMs: 1000 });
    const unhandled = vi.fn();
    process.on("unhandledRejection", unhandled);
    try {
      const token = deliveries.park(Promise.reject(new Error("the index is gone")));
      // A streamed one whose claim, whole result and entity all fail, untaken.
      const failing = Promise.reject(new Error("a claim failed"));
      const staged = {
        entity: {},
        cache: {},
        properties: [{ id: "p", claimed: {}, result: failing }],
        credentials: [],
        connections: [],
        result: failing,
      };
      deliveries.park(Promise.resolve({ mode: "stream", entity: Promise.resolve(staged) } as unknown as Delivery));
      deliveries.park(Promise.resolve({ mode: "stream", response: Promise.reject(new Error("the lookup failed")) } as Delivery));
      deliveries.park(Promise.resolve<Delivery>({ mode: "whole", response: ANSWER }));
      expect(deliveries.size).toBe(4);
      await vi.advanceTimersByTimeAsync(999);
      expect(deliveries.size).toBe(4);
      await vi.advanceTimersByTimeAsync(1);
      expect(deliveries.size).toBe(0);
      expect(deliveries.take(token)).toBeUndefined();
      vi.useRealTimers();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off("unhandledRejection", unhandled);
    }
  });
});

describe("startEarly: what the proxy starts, and for which requests", () => {
  const admittedCold = { ...cold, starts: true };
  const request = (method = "GET", headers: Record<string, string> = {}, url = "http://localhost/entity/alice.example") => ({
    method,
    url: new URL(url),
    headers: new Headers({ "user-agent": BROWSER, ...headers }),
  });

  it("a cold page asked with GET or HEAD: its results are parked under the token returned", async () => {
    for (const method of ["GET", "HEAD"]) {
      const deps = { resolver: fakeResolver(), deliveries: createDeliveries({ max: 10 }) };
      const token = await startEarly(deps, request(method), entityPage, admittedCold);
      expect(token).toEqual(expect.any(String));
      expect(deps.resolver.calls.map((c) => c.method)).toEqual(["staged"]);
      expect((await deps.deliveries.take(token))?.mode).toBe("stream");
    }
  });
  it("starts nothing for what Next does not render (another method, RSC, prefetches), for a page that fetches nothing, or past the room", async () => {
    const cases: [string, ReturnType<typeof request>, typeof admittedCold][] = [
      ["OPTIONS", request("OPTIONS"), admittedCold],
      ["POST", request("POST"), admittedCold],
      ["RSC", request("GET", { rsc: "1" }), admittedCold],
      ["prefetch", request("GET", { rsc: "1", "next-router-prefetch": "1" }), admittedCold],
      ["segment prefetch", request("GET", { "next-router-segment-prefetch": "/_tree" }), admittedCold],
      ["_rsc", request("GET", {}, "http://localhost/entity/alice.example?_rsc=abc"), admittedCold],
      ["cached or joining", request(), { ...admittedCold, starts: false }],
    ];
    for (const [name, req, admitted] of cases) {
      const deps = { resolver: fakeResolver(), deliveries: createDeliveries({ max: 10 }) };
      expect([name, await startEarly(deps, req, entityPage, admitted)]).toEqual([name, null]);
      expect([name, deps.resolver.calls, deps.deliveries.size]).toEqual([name, [], 0]);
    }
    const full = { resolver: fakeResolver(), deliveries: createDeliveries({ max: 1 }) };
    full.deliveries.park(Promise.resolve<Delivery>({ mode: "whole", response: ANSWER }));
    expect(await startEarly(full, request(), entityPage, admittedCold)).toBeNull();
    expect(full.resolver.calls).toEqual([]);
  });
});
