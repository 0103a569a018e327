/**
 * A page's results (web/delivery.ts, docs/architecture.md#one-request-one-decision): one decision,
 * started as the server admits the request, every promise in it handled whoever takes it.
 */
import { describe, expect, it, vi } from "vitest";
import type { ResolveOptions } from "ident-resolver";
import type { SearchResponse } from "ident-resolver";
import { refusal } from "ident-resolver/traffic";
import { startDelivery, type Admitted, type Delivery } from "./delivery";
import type { Page } from "./routes";

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
const cold: Admitted = { refresh: { asked: false, granted: false }, cached: null, client: "203.0.113.7" };

/** A resolver that records what it was asked, with which options. */
function fakeResolver() {
  const calls: { method: string; opts?: ResolveOptions }[] = [];
  return {
    calls,
    remember: async (r: SearchResponse) => (calls.push({ method: "remember" }), r),
    resolve: async (_q: unknown, opts?: ResolveOptions) => (calls.push({ method: "resolve", ...(opts ? { opts } : {}) }), ANSWER),
    resolveEntityStaged: async (_d: string, opts?: ResolveOptions) => (
      calls.push({ method: "staged", ...(opts ? { opts } : {}) }),
      refusal("busy", "x", 1)
    ),
  };
}

describe("startDelivery: one decision", () => {
  it("a page whose answer the cache had at admission arrives whole, remembered from the index, and fetches nothing", async () => {
    const resolver = fakeResolver();
    const delivery = await startDelivery(resolver, entityPage, { ...cold, cached: ANSWER }, BROWSER);
    expect(delivery).toEqual({ mode: "whole", response: ANSWER });
    expect(resolver.calls.map((c) => c.method)).toEqual(["remember"]);
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

describe("a delivery no page takes", () => {
  it("fails, to its claims, without an unhandled rejection (its client went away before Next reached the page)", async () => {
    const unhandled = vi.fn();
    process.on("unhandledRejection", unhandled);
    try {
      const failing = Promise.reject(new Error("a claim failed"));
      const staged = {
        entity: {},
        cache: {},
        properties: [{ id: "p", claimed: {}, result: failing }],
        credentials: [],
        connections: [],
        result: failing,
      };
      const broken = {
        remember: async () => Promise.reject(new Error("the index is gone")),
        resolve: async () => Promise.reject(new Error("the lookup failed")),
        resolveEntityStaged: async () => staged as never,
      };
      void startDelivery(broken, entityPage, { ...cold, cached: ANSWER }, BROWSER);
      void startDelivery(broken, entityPage, cold, BROWSER);
      void startDelivery(broken, lookupPage, cold, BROWSER);
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off("unhandledRejection", unhandled);
    }
  });
});
