import { describe, expect, it } from "vitest";
import type { FetchMode, FetchOutcome } from "../fetch/fetcher";
import { createResolver } from ".";

type Site = Record<string, { status?: number; body?: string; type?: string; fail?: "timeout" | "unreachable" | "blocked" | "too_large" }>;

/** A fake fetcher over a map of URL → response; records every call. */
function fakeFetch(site: Site, delayMs = 0) {
  const calls: string[] = [];
  const fetch = async (url: string, mode: FetchMode): Promise<FetchOutcome> => {
    calls.push(`${mode} ${url}`);
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    const r = site[url];
    const meta = { url, finalUrl: url, contentType: r?.type ?? "application/json", ms: 1 };
    if (r?.fail) return { ...meta, ok: false, status: r.fail, httpStatus: null, message: r.fail };
    if (!r || (r.status ?? 200) !== 200) return { ...meta, ok: false, status: "not_found", httpStatus: r?.status ?? 404, message: "404" };
    return { ...meta, ok: true, status: "found", httpStatus: 200, body: r.body ?? "", bytes: (r.body ?? "").length };
  };
  return { fetch, calls };
}
const j = (v: unknown) => ({ body: JSON.stringify(v) });
const ALICE = "§:entity:alice.example";

describe("resolver orchestration", () => {
  it("V7: falls back to the HTML embed only when the JSON document is not found", async () => {
    const { fetch, calls } = fakeFetch({
      "https://alice.example/": {
        body: `<script type="application/json" id="ident-hub">{"network_id":"${ALICE}"}</script>`,
        type: "text/html",
      },
    });
    const r = await createResolver({ fetch }).resolveEntity("alice.example");
    expect(r.entity).toMatchObject({ status: "accepted", source: { via: "embed", url: "https://alice.example/" } });
    expect(calls).toEqual(["json https://alice.example/ident.json", "html https://alice.example/"]);
  });
  it("a 200 that is not JSON is rejected, not replaced by the embed (docs/decisions.md#fetching)", async () => {
    const { fetch, calls } = fakeFetch({
      "https://alice.example/ident.json": { body: "<html>oops</html>", type: "text/html" },
      "https://alice.example/": { body: `<script type="application/json" id="ident-hub">{"network_id":"${ALICE}"}</script>` },
    });
    const r = await createResolver({ fetch }).resolveEntity("alice.example");
    expect(r.entity.status).toBe("rejected");
    expect(r.entity.problems.map((p) => p.code)).toEqual(["content_type", "invalid_json"]);
    expect(calls).toHaveLength(1);
  });
  it.each(["timeout", "unreachable", "blocked", "too_large"] as const)("a %s entity fetch does not fall back", async (fail) => {
    const { fetch, calls } = fakeFetch({ "https://alice.example/ident.json": { fail } });
    const r = await createResolver({ fetch }).resolveEntity("alice.example");
    expect(r.entity.status).toBe(fail);
    expect(r.jsonld).toBeNull();
    expect(calls).toHaveLength(1);
  });
  it("budget: claims past IDENT_MAX_CLAIMS are reported `limit` and never fetched; bad entries do not use it", async () => {
    const properties = ["a", "b", "c", "d"].map((x) => ({ id: `§:property:${x}.example` }));
    const { fetch, calls } = fakeFetch({
      "https://alice.example/ident.json": j({ network_id: ALICE, properties: [{ id: "bad" }, ...properties] }),
    });
    const r = await createResolver({ fetch, limits: { maxClaims: 2 } }).resolveEntity("alice.example");
    expect(r.properties.map((c) => c.reason)).toEqual(["invalid_entry", "not_found", "not_found", "limit", "limit"]);
    expect(calls.filter((c) => c.includes("ident-property.json"))).toHaveLength(2);
  });
  it("fetches claims in parallel, at most 6 per host", async () => {
    const credentials = Array.from({ length: 12 }, (_, i) => ({ id: `@u${i}@guild.example` }));
    let active = 0;
    let peak = 0;
    const site: Site = { "https://alice.example/ident.json": j({ network_id: ALICE, credentials }) };
    const inner = fakeFetch(site);
    const fetch = async (url: string, mode: FetchMode) => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 10));
      active--;
      return inner.fetch(url, mode);
    };
    await createResolver({ fetch }).resolveEntity("alice.example");
    expect(peak).toBe(6);
  });
  it("shares one request between concurrent resolutions of one domain", async () => {
    const { fetch, calls } = fakeFetch({ "https://alice.example/ident.json": j({ network_id: ALICE }) }, 20);
    const resolver = createResolver({ fetch });
    await Promise.all(Array.from({ length: 20 }, () => resolver.resolveEntity("alice.example")));
    expect(calls).toEqual(["json https://alice.example/ident.json"]);
  });
  it("a bad query is a value, not an exception", async () => {
    const { fetch, calls } = fakeFetch({});
    const out = await createResolver({ fetch }).search("http://alice.example");
    expect(out).toMatchObject({ ok: false, error: { code: "invalid_query" } });
    expect(calls).toHaveLength(0);
  });
  it("marks the result stale when a stale copy was served", async () => {
    let t = 0;
    const { fetch } = fakeFetch({ "https://alice.example/ident.json": j({ network_id: ALICE }) });
    const resolver = createResolver({ fetch, now: () => t });
    const first = await resolver.resolveEntity("alice.example");
    t += 2 * 3600_000;
    const second = await resolver.resolveEntity("alice.example");
    expect(first.cache).toEqual({ fetched_at: new Date(0).toISOString(), stale: false });
    expect(second.cache).toEqual({ fetched_at: new Date(0).toISOString(), stale: true });
  });
});

describe("parsing once per cached document", () => {
  const site = (name: string): Site => ({
    "https://alice.example/ident.json": j({ network_id: ALICE, details: { name }, properties: [{ id: "§:property:blog.example" }] }),
    "https://blog.example/ident-property.json": j({
      ident_property: { id: "§:property:blog.example", ownership: [{ network_id: ALICE }] },
    }),
  });

  it("a warm resolution reuses the parsed documents of the cached outcomes", async () => {
    const { fetch, calls } = fakeFetch(site("Alice"));
    const resolver = createResolver({ fetch });
    const first = await resolver.resolveEntity("alice.example");
    const second = await resolver.resolveEntity("alice.example");
    expect(calls).toHaveLength(2);
    expect(second).toEqual(first);
    // The same parsed value, not an equal one parsed again.
    expect(second.properties[0]?.document).toBe(first.properties[0]?.document);
    expect(second.properties[0]?.document).toBeDefined();
  });

  it("a refreshed document is parsed again, and results never share their problem lists", async () => {
    const s = site("Alice");
    const { fetch } = fakeFetch(s);
    const resolver = createResolver({ fetch });
    const first = await resolver.resolveEntity("alice.example");
    first.entity.problems.push({ code: "x", severity: "warning", message: "added by a caller" });
    first.properties[0]?.problems.push({ code: "x", severity: "warning", message: "added by a caller" });
    Object.assign(s, site("Alice Moreau"));
    const refreshed = await resolver.resolveEntity("alice.example", { refresh: true });
    expect(refreshed.entity).toMatchObject({ details: { name: "Alice Moreau" }, problems: [] });
    expect(refreshed.properties[0]?.problems).toEqual([]);
    expect(refreshed.properties[0]?.document).not.toBe(first.properties[0]?.document);
  });
});

describe("amplification bounds", () => {
  it("a 1 MiB list of 350,000 tiny entries reports 1,000 claims and one warning, not 350,000", async () => {
    const body = `{"network_id":"${ALICE}","properties":[${Array(350_000).fill("1").join(",")}]}`;
    expect(body.length).toBeLessThan(1024 * 1024);
    const { fetch, calls } = fakeFetch({ "https://alice.example/ident.json": { body } });
    const r = await createResolver({ fetch }).resolveEntity("alice.example");
    expect(r.properties).toHaveLength(1000);
    expect(r.entity.problems.filter((p) => p.code === "too_many_entries")).toHaveLength(1);
    expect(JSON.stringify(r).length).toBeLessThan(500_000);
    expect(calls).toHaveLength(1);
  });
  it("a property document with 100,000 owners gives one limit warning and at most 50 results", async () => {
    const owners = Array.from({ length: 100_000 }, (_, i) => ({ network_id: `§:entity:o${i}.example` }));
    const { fetch } = fakeFetch({
      "https://blog.example/ident-property.json": j({
        ident_property: { id: "§:property:blog.example", ownership: [...owners, { network_id: "bad" }] },
      }),
    });
    const out = await createResolver({ fetch }).search("§:property:blog.example");
    if (!out.ok) throw new Error(out.error.message);
    expect(out.response.results).toHaveLength(50);
    expect(out.response.problems.map((p) => p.code)).toEqual(["invalid_owner", "limit"]);
  });
});

describe("peek: the answer from the cache alone", () => {
  const site = {
    "https://alice.example/ident.json": j({ network_id: ALICE, properties: [{ id: "§:property:blog.example" }] }),
    "https://blog.example/ident-property.json": j({
      ident_property: { id: "§:property:blog.example", ownership: [{ network_id: ALICE }] },
    }),
  };
  const query = { input: "alice.example", kind: "domain" as const, domain: "alice.example" };
  it("answers null and fetches nothing while a document is not cached", async () => {
    const { fetch, calls } = fakeFetch(site);
    const resolver = createResolver({ fetch });
    expect(await resolver.peek(query)).toBeNull();
    expect(calls).toEqual([]);
  });
  it("answers null when the entity is cached but one claim document is not", async () => {
    const { fetch, calls } = fakeFetch(site, 50);
    const resolver = createResolver({ fetch });
    await resolver.resolveEntityStaged("alice.example"); // the entity document only, claims still on their way
    const before = calls.length;
    const peeked = resolver.peek(query);
    expect(await peeked).toBeNull();
    expect(calls.length).toBe(before);
  });
  it("once everything is cached, answers what a lookup answers, without a fetch", async () => {
    const { fetch, calls } = fakeFetch(site);
    const resolver = createResolver({ fetch });
    const looked = await resolver.resolve(query);
    const before = calls.length;
    expect(await resolver.peek(query)).toEqual(looked);
    expect(calls.length).toBe(before);
  });
  it("a stale document is answered, and starts one background refresh as a lookup would", async () => {
    let t = 0;
    const { fetch, calls } = fakeFetch(site);
    const resolver = createResolver({ fetch, now: () => t });
    await resolver.resolve(query);
    t = 2 * 3600_000;
    const before = calls.length;
    const peeked = await resolver.peek(query);
    expect(peeked?.results[0]?.cache.stale).toBe(true);
    await new Promise((r) => setTimeout(r, 10));
    expect(calls.length - before).toBe(2);
  });
});
