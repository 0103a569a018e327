import { answered } from "../../test/helpers/answered.ts";
import { describe, expect, it } from "vitest";
import type { FetchMode, FetchOutcome } from "../fetch/outcome.ts";
import { createDocumentCache } from "../fetch/cache.ts";
import { refusal, type FetchRefusal } from "../traffic/refusal.ts";
import { createResolverCore, newWork } from ".";

type Site = Record<string, { status?: number; body?: string; type?: string; fail?: "timeout" | "unreachable" | "blocked" | "too_large" }>;

/** A fake fetcher over a map of URL → response; records every call. */
function fakeFetch(site: Site, delayMs = 0) {
  const calls: string[] = [];
  const fetch = async (url: string, mode: FetchMode): Promise<FetchOutcome | FetchRefusal> => {
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
  it("background work (discovery, docs/decisions.md#discovery) fetches at background priority, behind every person's", async () => {
    const priorities: (string | undefined)[] = [];
    const { fetch } = fakeFetch({ "https://alice.example/ident.json": j({ network_id: ALICE }) });
    const resolver = createResolverCore({
      fetch: (url, mode, options) => {
        priorities.push(options?.priority);
        return fetch(url, mode);
      },
    });
    answered(await resolver.resolveEntity("alice.example", { background: true, revalidate: true }));
    answered(await resolver.resolveEntity("alice.example", { refresh: true }));
    expect(priorities).toEqual(["background", "person"]);
  });
  it("V7: falls back to the HTML embed only when the JSON document is not found", async () => {
    const { fetch, calls } = fakeFetch({
      "https://alice.example/": {
        body: `<script type="application/json" id="ident-hub">{"network_id":"${ALICE}"}</script>`,
        type: "text/html",
      },
    });
    const r = answered(await createResolverCore({ fetch }).resolveEntity("alice.example"));
    expect(r.entity).toMatchObject({ status: "accepted", source: { via: "embed", url: "https://alice.example/" } });
    expect(calls).toEqual(["json https://alice.example/ident.json", "html https://alice.example/"]);
  });
  it("a 200 that is not JSON is rejected, not replaced by the embed (docs/decisions.md#fetching)", async () => {
    const { fetch, calls } = fakeFetch({
      "https://alice.example/ident.json": { body: "<html>oops</html>", type: "text/html" },
      "https://alice.example/": { body: `<script type="application/json" id="ident-hub">{"network_id":"${ALICE}"}</script>` },
    });
    const r = answered(await createResolverCore({ fetch }).resolveEntity("alice.example"));
    expect(r.entity.status).toBe("rejected");
    expect(r.entity.problems.map((p) => p.code)).toEqual(["content_type", "invalid_json"]);
    expect(calls).toHaveLength(1);
  });
  it.each(["timeout", "unreachable", "blocked", "too_large"] as const)("a %s entity fetch does not fall back", async (fail) => {
    const { fetch, calls } = fakeFetch({ "https://alice.example/ident.json": { fail } });
    const r = answered(await createResolverCore({ fetch }).resolveEntity("alice.example"));
    expect(r.entity.status).toBe(fail);
    expect(r.jsonld).toBeNull();
    expect(calls).toHaveLength(1);
  });
  it("budget: claims past IDENT_MAX_CLAIMS are reported `limit` and never fetched; bad entries do not use it", async () => {
    const properties = ["a", "b", "c", "d"].map((x) => ({ id: `§:property:${x}.example` }));
    const { fetch, calls } = fakeFetch({
      "https://alice.example/ident.json": j({ network_id: ALICE, properties: [{ id: "bad" }, ...properties] }),
    });
    const r = answered(await createResolverCore({ fetch, limits: { maxClaims: 2 } }).resolveEntity("alice.example"));
    expect(r.properties.map((c) => c.reason)).toEqual(["invalid_entry", "not_found", "not_found", "limit", "limit"]);
    // The entity's own document lists too many: that is a verdict, recorded like every other.
    expect(r.properties.every((c) => c.not_checked === undefined)).toBe(true);
    expect(calls.filter((c) => c.includes("ident-property.json"))).toHaveLength(2);
  });
  it("shares one request between concurrent resolutions of one domain", async () => {
    const { fetch, calls } = fakeFetch({ "https://alice.example/ident.json": j({ network_id: ALICE }) }, 20);
    const resolver = createResolverCore({ fetch });
    await Promise.all(Array.from({ length: 20 }, () => resolver.resolveEntity("alice.example")));
    expect(calls).toEqual(["json https://alice.example/ident.json"]);
  });
  it("a streamed entity asks the index how it will annotate claims only when it has claims (docs/decisions.md#the-index)", async () => {
    const { fetch } = fakeFetch({
      "https://alice.example/ident.json": j({ network_id: ALICE }),
      "https://bob.example/ident.json": j({ network_id: "§:entity:bob.example", properties: [{ id: "§:property:blog.bob.example" }] }),
    });
    const asked: string[] = [];
    const resolver = createResolverCore({
      fetch,
      annotate: async (r) => r,
      preview: async (domain) => (asked.push(domain), null),
    });
    answered(await resolver.resolveEntityStaged("alice.example"));
    answered(await resolver.resolveEntityStaged("bob.example"));
    expect(asked).toEqual(["bob.example"]);
  });
  it("a bad query is a value, not an exception", async () => {
    const { fetch, calls } = fakeFetch({});
    const out = await createResolverCore({ fetch }).search("http://alice.example");
    expect(out).toMatchObject({ ok: false, error: { code: "invalid_query" } });
    expect(calls).toHaveLength(0);
  });
  it("marks the result stale when a stale copy was served", async () => {
    let t = 0;
    const { fetch } = fakeFetch({ "https://alice.example/ident.json": j({ network_id: ALICE }) });
    const resolver = createResolverCore({ fetch, now: () => t });
    const first = answered(await resolver.resolveEntity("alice.example"));
    t += 2 * 3600_000;
    const second = answered(await resolver.resolveEntity("alice.example"));
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
    const resolver = createResolverCore({ fetch });
    const first = answered(await resolver.resolveEntity("alice.example"));
    const second = answered(await resolver.resolveEntity("alice.example"));
    expect(calls).toHaveLength(2);
    expect(second).toEqual(first);
    // The same parsed value, not an equal one parsed again.
    expect(second.properties[0]?.document).toBe(first.properties[0]?.document);
    expect(second.properties[0]?.document).toBeDefined();
  });

  it("a refreshed document is parsed again, and results never share their problem lists", async () => {
    const s = site("Alice");
    const { fetch } = fakeFetch(s);
    const resolver = createResolverCore({ fetch });
    const first = answered(await resolver.resolveEntity("alice.example"));
    first.entity.problems.push({ code: "x", severity: "warning", message: "added by a caller" });
    first.properties[0]?.problems.push({ code: "x", severity: "warning", message: "added by a caller" });
    Object.assign(s, site("Alice Moreau"));
    const refreshed = answered(await resolver.resolveEntity("alice.example", { refresh: true }));
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
    const r = answered(await createResolverCore({ fetch }).resolveEntity("alice.example"));
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
    const out = await createResolverCore({ fetch }).search("§:property:blog.example");
    if (!out.ok) throw new Error("error" in out ? out.error.message : out.refused.message);
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
    const resolver = createResolverCore({ fetch });
    expect(await resolver.peek(query)).toBeNull();
    expect(calls).toEqual([]);
  });
  it("answers null when the entity is cached but one claim document is not", async () => {
    const { fetch, calls } = fakeFetch(site, 50);
    const resolver = createResolverCore({ fetch });
    answered(await resolver.resolveEntityStaged("alice.example")); // the entity document only, claims still on their way
    const before = calls.length;
    const peeked = resolver.peek(query);
    expect(await peeked).toBeNull();
    expect(calls.length).toBe(before);
  });
  it("once everything is cached, answers what a lookup answers, without a fetch", async () => {
    const { fetch, calls } = fakeFetch(site);
    const resolver = createResolverCore({ fetch });
    const looked = answered(await resolver.resolve(query));
    const before = calls.length;
    expect(await resolver.peek(query)).toEqual(looked);
    expect(calls.length).toBe(before);
  });
  it("a stale document is answered, and starts one background refresh as a lookup would", async () => {
    let t = 0;
    const { fetch, calls } = fakeFetch(site);
    const resolver = createResolverCore({ fetch, now: () => t });
    answered(await resolver.resolve(query));
    t = 2 * 3600_000;
    const before = calls.length;
    const peeked = await resolver.peek(query);
    expect(peeked?.results[0]?.cache.stale).toBe(true);
    await new Promise((r) => setTimeout(r, 10));
    expect(calls.length - before).toBe(2);
  });
});

describe("probe: how long a cached answer stands (the page cache's version, docs/decisions.md#page-cache)", () => {
  it("until the first of its documents changes by itself; the generation moves when one is fetched again", async () => {
    const t = 1000;
    const { fetch } = fakeFetch({
      "https://alice.example/ident.json": j({ network_id: ALICE, properties: [{ id: "§:property:blog.example" }] }),
    });
    const resolver = createResolverCore({ fetch, now: () => t });
    const query = { input: "alice.example", kind: "domain" as const, domain: "alice.example" };
    answered(await resolver.resolve(query));
    // The entity is fresh for an hour; the blog's failed outcomes are kept 5 minutes: the answer stands 5 minutes.
    const probed = await resolver.probe(query);
    expect(probed).toMatchObject({ state: "cached", until: t + 5 * 60_000 });
    const g = resolver.generation();
    expect(resolver.generation()).toBe(g);
    answered(await resolver.resolve(query, { refresh: true }));
    expect(resolver.generation()).toBeGreaterThan(g);
  });
});

describe("per-query fetch budget and refused work (docs/decisions.md#outbound-work)", () => {
  /** An entity claiming `n` properties on distinct hosts, none of which publishes anything. */
  const claimsMany = (n: number) =>
    j({ network_id: ALICE, properties: Array.from({ length: n }, (_, i) => ({ id: `§:property:p${i}.example` })) });

  it("IDENT_MAX_FETCHES_PER_QUERY: one query starts at most that many fetches; the claims past it are `limit`", async () => {
    const { fetch, calls } = fakeFetch({ "https://alice.example/ident.json": claimsMany(40) });
    const work = newWork();
    const r = answered(await createResolverCore({ fetch, limits: { maxFetchesPerQuery: 31 } }).resolveEntity("alice.example", { work }));
    // 1 entity document, then 2 fetches per claim (the JSON URL and the fallback page): 15 claims fit.
    expect(calls).toHaveLength(31);
    expect(work.fetches).toBe(31);
    const limited = r.properties.filter((c) => c.reason === "limit");
    expect(limited.length).toBeGreaterThanOrEqual(25);
    expect(limited[0]?.problems.at(-1)?.message).toMatch(/^Not checked: this lookup has already started the 31 fetches/);
    // Its verdict is unknown, not failed: the index keeps what it knew (docs/decisions.md#the-index).
    expect(new Set(limited.map((c) => c.not_checked))).toEqual(new Set(["query_budget"]));
    expect(r.properties.filter((c) => c.reason !== "limit").every((c) => c.not_checked === undefined)).toBe(true);
    expect(work.refused).toContain("query_budget");
  });
  it("past the budget, a claim whose documents are cached is still checked from the cache, not refused", async () => {
    const site: Site = {
      "https://alice.example/ident.json": j({
        network_id: ALICE,
        properties: Array.from({ length: 5 }, (_, i) => ({ id: `§:property:p${i}.example` })),
        other_connections: [{ id: "https://social.example/alice" }],
      }),
      "https://social.example/alice": { body: '<a rel="me" href="https://alice.example/">me</a>', type: "text/html" },
    };
    for (let i = 0; i < 5; i++) {
      site[`https://p${i}.example/ident-property.json`] = j({
        ident_property: { id: `§:property:p${i}.example`, ownership: [{ network_id: ALICE }] },
      });
    }
    const { fetch, calls } = fakeFetch(site);
    const cache = createDocumentCache();
    const warm = answered(await createResolverCore({ fetch, cache }).resolveEntity("alice.example"));
    expect([...warm.properties, ...warm.connections].map((c) => c.verified)).toEqual([true, true, true, true, true, true]);
    const before = calls.length;
    // No fetch at all may start: everything must come from the cache.
    const work = newWork();
    const again = answered(
      await createResolverCore({ fetch, cache, limits: { maxFetchesPerQuery: 0 } }).resolveEntity("alice.example", { work }),
    );
    expect(calls.length).toBe(before);
    expect([...again.properties, ...again.connections].map((c) => c.verified)).toEqual([true, true, true, true, true, true]);
    expect(work.refused).toEqual([]);
  });
  it("a refused claim is not remembered: the next query fetches it", async () => {
    const { fetch, calls } = fakeFetch({ "https://alice.example/ident.json": claimsMany(5) });
    const resolver = createResolverCore({ fetch, limits: { maxFetchesPerQuery: 5 } });
    const first = answered(await resolver.resolveEntity("alice.example"));
    expect(first.properties.filter((c) => c.reason === "limit").length).toBeGreaterThan(0);
    const before = calls.length;
    const second = answered(await resolver.resolveEntity("alice.example"));
    expect(calls.length - before).toBeGreaterThan(0);
    expect(second.properties.filter((c) => c.reason === "not_found").length).toBeGreaterThan(
      first.properties.filter((c) => c.reason === "not_found").length,
    );
  });
  it("joining a fetch in flight, or reading the cache, spends nothing", async () => {
    const { fetch, calls } = fakeFetch({ "https://alice.example/ident.json": claimsMany(3) }, 20);
    const resolver = createResolverCore({ fetch });
    const [a, b] = [newWork(), newWork()];
    (await Promise.all([resolver.resolveEntity("alice.example", { work: a }), resolver.resolveEntity("alice.example", { work: b })])).map(
      answered,
    );
    expect(a.fetches + b.fetches).toBe(calls.length);
    expect(Math.min(a.fetches, b.fetches)).toBe(0);
    const c = newWork();
    answered(await resolver.resolveEntity("alice.example", { work: c }));
    expect(c.fetches).toBe(0);
  });
  it("a property with 50 owners of 100 claims each: at most 300 fetches, every owner answered", async () => {
    const owners = Array.from({ length: 50 }, (_, i) => ({ network_id: `§:entity:o${i}.example` }));
    const site: Site = {
      "https://blog.example/ident-property.json": j({ ident_property: { id: "§:property:blog.example", ownership: owners } }),
    };
    for (let i = 0; i < 50; i++) {
      const properties = Array.from({ length: 50 }, (_, k) => ({ id: `§:property:o${i}-p${k}.example` }));
      const credentials = Array.from({ length: 50 }, (_, k) => ({ id: `@o${i}@c${k}.example` }));
      site[`https://o${i}.example/ident.json`] = j({ network_id: `§:entity:o${i}.example`, properties, credentials });
    }
    const { fetch, calls } = fakeFetch(site);
    const work = newWork();
    const out = answered(
      await createResolverCore({ fetch }).resolve(
        { input: "§:property:blog.example", kind: "property_id", domain: "blog.example", id: "§:property:blog.example" },
        { work },
      ),
    );
    expect(calls.length).toBeLessThanOrEqual(300);
    expect(work.fetches).toBe(calls.length);
    expect(out.results).toHaveLength(50);
    const claims = out.results.flatMap((r) => [...r.properties, ...r.credentials]);
    expect(claims).toHaveLength(50 * 100);
    expect(claims.filter((c) => c.reason === "limit").length).toBeGreaterThan(4800);
  });
  it("owners past the budget are named in one `limit` problem, not dropped silently", async () => {
    const owners = Array.from({ length: 20 }, (_, i) => ({ network_id: `§:entity:o${i}.example` }));
    const site: Site = {
      "https://blog.example/ident-property.json": j({ ident_property: { id: "§:property:blog.example", ownership: owners } }),
    };
    for (let i = 0; i < 20; i++) site[`https://o${i}.example/ident.json`] = j({ network_id: `§:entity:o${i}.example` });
    const { fetch } = fakeFetch(site);
    const out = await createResolverCore({ fetch, limits: { maxFetchesPerQuery: 11 } }).search("§:property:blog.example");
    if (!out.ok) throw new Error("error" in out ? out.error.message : out.refused.message);
    // 1 property document, then 1 entity document per owner: 10 owners fit.
    expect(out.response.results).toHaveLength(10);
    const problem = out.response.problems.find((p) => p.code === "limit");
    expect(problem?.message).toMatch(/^10 owner\(s\) were not checked \(o10\.example, .*\): this lookup has already started/);
  });
  it("a local fault is a refusal, never reported or cached as the publisher's failure", async () => {
    let faults = 1;
    const inner = fakeFetch({ "https://alice.example/ident.json": claimsMany(1) });
    const fetch: typeof inner.fetch = async (url, mode) => {
      if (url.includes("alice") && faults-- > 0) return refusal("local_fault", "out of file descriptors (EMFILE)", 5);
      return inner.fetch(url, mode);
    };
    const resolver = createResolverCore({ fetch });
    expect(await resolver.resolveEntity("alice.example")).toEqual({
      refused: "local_fault",
      message: "out of file descriptors (EMFILE)",
      retryAfterS: 5,
    });
    const r = answered(await resolver.resolveEntity("alice.example"));
    expect(r.entity.status).toBe("accepted");
  });
  it("a claim refused by the fetcher is `limit` in the fetcher's words", async () => {
    const inner = fakeFetch({ "https://alice.example/ident.json": claimsMany(2) });
    const fetch: typeof inner.fetch = async (url, mode) => {
      if (url.includes("p1.example")) return refusal("host_budget", "p1.example has had its 300 requests", 42);
      return inner.fetch(url, mode);
    };
    const work = newWork();
    const r = answered(await createResolverCore({ fetch }).resolveEntity("alice.example", { work }));
    expect(r.properties.map((c) => c.reason)).toEqual(["not_found", "limit"]);
    expect(r.properties[1]?.problems.at(-1)?.message).toBe("Not checked: p1.example has had its 300 requests");
    expect(r.properties.map((c) => c.not_checked)).toEqual([undefined, "host_budget"]);
    expect(work.refused).toEqual(["host_budget"]);
  });
  it("a refresh refused for a document known from before: answered as last fetched, noted in the query's work and said in the response; the live check is refused", async () => {
    let spent = false;
    const inner = fakeFetch({ "https://alice.example/ident.json": claimsMany(1) });
    const fetch: typeof inner.fetch = async (url, mode) =>
      spent ? refusal("address_budget", "the server of alice.example has had its requests", 30) : inner.fetch(url, mode);
    const resolver = createResolverCore({ fetch });
    answered(await resolver.resolveEntity("alice.example"));
    spent = true;
    const work = newWork();
    const again = await resolver.resolve({ kind: "domain", input: "alice.example", domain: "alice.example" }, { refresh: true, work });
    if ("refused" in again) throw new Error(again.message);
    expect(again.results[0]?.entity.status).toBe("accepted");
    expect(work.knownServed).toEqual([expect.objectContaining({ refused: "address_budget", retryAfterS: 30 })]);
    expect(work.refused).toContain("address_budget");
    expect(again.problems).toEqual([
      expect.objectContaining({
        code: "not_fetched_again",
        severity: "warning",
        message: "Answered as last fetched, not fetched again now: the server of alice.example has had its requests",
      }),
    ]);
    expect(await resolver.resolveEntity("alice.example", { refresh: true, live: true })).toMatchObject({ refused: "address_budget" });
  });
});
