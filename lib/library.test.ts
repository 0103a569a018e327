import { describe, expect, it, vi } from "vitest";
import type { CachedDocument, ResolverCache } from "./fetch/user-cache.ts";
import type { WebFetch } from "./fetch/web-fetch.ts";
import { createResolver } from "./library.ts";
import { VERSION } from "./version.ts";

const S = "\u00a7";
/** A publisher's documents, served by a fake `fetch`; each URL's requests counted. */
const DOCUMENTS: Record<string, unknown> = {
  "https://alice.example/ident.json": { network_id: `${S}:entity:alice.example`, properties: [{ id: `${S}:property:blog.example` }] },
  "https://blog.example/ident-property.json": {
    ident_property: { id: `${S}:property:blog.example`, ownership: [{ network_id: `${S}:entity:alice.example` }] },
  },
};

function publisher(documents = DOCUMENTS) {
  const requests = new Map<string, number>();
  const fetchFn: WebFetch = async (url) => {
    requests.set(url, (requests.get(url) ?? 0) + 1);
    const doc = documents[url];
    return doc === undefined
      ? new Response("not here", { status: 404 })
      : new Response(JSON.stringify(doc), { headers: { "content-type": "application/json" } });
  };
  return { fetchFn, requests };
}

/** A cache kept in a Map, as a user would write one over Redis or a file. */
function mapCache() {
  const entries = new Map<string, { value: CachedDocument; expiresAt: number }>();
  const cache: ResolverCache = {
    get: (key) => entries.get(key)?.value,
    set: (key, value, { expiresAt }) => void entries.set(key, { value, expiresAt }),
  };
  return { cache, entries };
}

describe("createResolver (docs/library.md)", () => {
  it("resolves over a given fetch into the record /api/resolve answers, naming its maker", async () => {
    const { fetchFn } = publisher();
    const record = await createResolver({ fetch: fetchFn }).resolve("alice.example");
    if ("error" in record) throw new Error(record.error.message);
    expect(record).toMatchObject({
      schema: "ident-resolver/search@1",
      query: { kind: "domain", domain: "alice.example" },
      resolver: { name: "ident-resolver", version: VERSION },
    });
    expect(record.results[0]?.properties[0]).toMatchObject({ id: `${S}:property:blog.example`, verified: true });
  });
  it("answers a bad query with the API's error body, not an exception", async () => {
    const record = await createResolver({ fetch: publisher().fetchFn }).resolve("not a query!");
    expect(record).toMatchObject({ error: { code: "invalid_query" } });
  });
  it("stops waiting when the signal aborts, with the signal's reason", async () => {
    const never: WebFetch = () => new Promise(() => undefined);
    const controller = new AbortController();
    const waiting = createResolver({ fetch: never }).resolve("alice.example", { signal: controller.signal });
    controller.abort(new Error("enough"));
    await expect(waiting).rejects.toThrow("enough");
    await expect(
      createResolver({ fetch: never }).resolve("alice.example", { signal: AbortSignal.abort(new Error("already")) }),
    ).rejects.toThrow("already");
  });
  it("keeps documents in a brought cache, with the times they turn stale and expire, and reads them from it in another resolver", async () => {
    const { cache, entries } = mapCache();
    const first = publisher();
    const now = () => 1_000_000;
    await createResolver({ fetch: first.fetchFn, cache, now }).resolve("alice.example");
    expect([...entries.keys()].sort()).toEqual(["json https://alice.example/ident.json", "json https://blog.example/ident-property.json"]);
    expect(entries.get("json https://alice.example/ident.json")?.expiresAt).toBe(1_000_000 + 86_400_000);
    const second = publisher();
    const record = await createResolver({ fetch: second.fetchFn, cache, now }).resolve("alice.example");
    expect("results" in record && record.results[0]?.properties[0]?.verified).toBe(true);
    expect(second.requests.size).toBe(0);
  });
  it("writes found documents alone: a failure never replaces, in the brought cache, a document found before", async () => {
    const { cache, entries } = mapCache();
    await createResolver({ fetch: publisher().fetchFn, cache }).resolve("alice.example");
    const kept = entries.get("json https://blog.example/ident-property.json")?.value;
    const down: WebFetch = async () => new Response("down", { status: 500 });
    await createResolver({ fetch: down, cache }).resolve("alice.example", { refresh: true });
    expect(entries.get("json https://blog.example/ident-property.json")?.value).toBe(kept);
    expect([...entries.values()].every((e) => e.value.outcome.ok)).toBe(true);
  });
  it("does not wait for a cache that does not answer, nor for its writes", async () => {
    const stuck: ResolverCache = { get: () => new Promise(() => undefined), set: () => new Promise(() => undefined) };
    const record = await createResolver({ fetch: publisher().fetchFn, cache: stuck }).resolve("alice.example");
    expect("results" in record && record.results[0]?.properties[0]?.verified).toBe(true);
  });
  it("passes over a cache that throws or answers something else, saying so, and still resolves", async () => {
    const warn = vi.fn();
    const broken: ResolverCache = {
      get: (key) => {
        if (key.includes("alice")) throw new Error("cache down");
        // The right keys, the wrong shape inside: not taken either.
        return { outcome: { ok: true }, fetchedAt: 1 } as unknown as CachedDocument;
      },
      set: () => Promise.reject(new Error("disk full")),
    };
    const record = await createResolver({ fetch: publisher().fetchFn, cache: broken, logger: { warn } }).resolve("alice.example");
    expect("results" in record && record.results[0]?.properties[0]?.verified).toBe(true);
    const said = warn.mock.calls.map(([m]) => String(m));
    expect(said.some((m) => m.includes("get failed (cache down)"))).toBe(true);
    expect(said.some((m) => m.includes("is not a cached document"))).toBe(true);
    expect(said.some((m) => m.includes("set failed (disk full)"))).toBe(true);
  });
  it("checks a document with nothing fetched, and a domain live", async () => {
    const { fetchFn, requests } = publisher();
    const resolver = createResolver({ fetch: fetchFn });
    const document = await resolver.check({ network_id: `${S}:entity:x.example` });
    expect(document).toMatchObject({ schema: "ident-resolver/check@1", target: { kind: "file" }, ok: true });
    const text = await resolver.check("{ not json");
    expect(text).toMatchObject({ ok: false, errors: 1 });
    expect(requests.size).toBe(0);
    expect(await resolver.check("alice.example")).toMatchObject({ target: { kind: "domain", domain: "alice.example" }, ok: true });
    expect(await resolver.check(`${S}:property:blog.example`)).toMatchObject({ error: { code: "invalid_query" } });
  });
});
