/**
 * Every refusal has one shape (docs/architecture.md#routes, "answer"; web/refusal-answer.ts): pages,
 * the API, feeds, sitemaps, the badge, a preview image, a lookup page and the re-check, each refused on a server of this file's own
 * with small limits, answer with the same status (429), `Retry-After`, the client's `RateLimit-Policy`
 * and `RateLimit`, and the security headers, with the body of their kind: HTML for a page, JSON for
 * the API, the feeds and the sitemaps, a grey SVG for the badge. The re-check, a form, goes back to
 * its page (303) naming the limit, with the same RateLimit headers.
 */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import type { APIResponse } from "@playwright/test";
import { expect, test } from "./helpers/test";
import { spawnSampleNetwork, type SpawnedNetwork } from "../test/network/spawn";
import { ready, startServer } from "./helpers/server";

test.describe.configure({ mode: "serial", timeout: 120_000 });

const PORT = 3117;
const base = `http://localhost:${PORT}`;

let net: SpawnedNetwork;
let server: ChildProcess;
test.beforeAll(async ({ request }) => {
  test.setTimeout(120_000);
  net = await spawnSampleNetwork();
  server = startServer([path.resolve("web/serve.js")], {
    PORT: String(PORT),
    IDENT_TRUSTED_HOPS: "1",
    ...net.env,
    IDENT_SEARCHES_PER_MIN: "1",
    IDENT_STORE_READS_PER_MIN: "2",
  });
  await ready(request, PORT, server);
});
test.afterAll(async () => {
  server?.kill("SIGTERM");
  await net?.stop();
});

/** What every refusal carries, whatever its route. */
function expectRefusalHeaders(r: APIResponse, what: string) {
  const h = r.headers();
  expect(r.status(), what).toBe(429);
  expect(h["retry-after"], what).toMatch(/^\d+$/);
  expect(h["ratelimit-policy"], what).toMatch(/"search";q=1;w=60/);
  expect(h["ratelimit-policy"], what).toMatch(/"reads";q=2;w=60/);
  expect(h["ratelimit"], what).toMatch(/"reads";r=\d+;t=\d+/);
  expect(h["x-content-type-options"], what).toBe("nosniff");
  expect(h["x-frame-options"], what).toBe("DENY");
  expect(h["referrer-policy"], what).toBe("strict-origin-when-cross-origin");
  expect(h["content-security-policy"], what).toContain("frame-ancestors 'none'");
  expect(h["cache-control"], what).toBe("no-store");
}

test("pages, the API, feeds, sitemaps and the badge refuse with the same status and headers, each in its own body", async ({ request }) => {
  // Each route by a client of its own, asked until refused: at most 3 times (reads 2 a minute, searches 1).
  const refusedOf = async (target: string, client: string) => {
    for (let i = 0; i < 3; i++) {
      const r = await request.get(`${base}${target}`, { headers: { "x-forwarded-for": client }, maxRedirects: 0 });
      if (r.status() !== 200) return r;
    }
    throw new Error(`${target} was never refused`);
  };
  const page = await refusedOf("/search?q=furniture+maker", "198.51.100.61");
  expectRefusalHeaders(page, "the search page");
  expect(page.headers()["content-type"]).toMatch(/^text\/html/);
  expect(await page.text()).toContain("Too many searches for now");

  // A later page: the first is kept whole by the page cache, and a copy it answers reads nothing, so counts nothing.
  const later = Buffer.from(JSON.stringify([1, "alice.example", "k"])).toString("base64url");
  const issuer = await refusedOf(`/issuer/guild.example?after=${later}`, "198.51.100.62");
  expectRefusalHeaders(issuer, "an issuer's page");
  expect(issuer.headers()["content-type"]).toMatch(/^text\/html/);

  const api = await refusedOf("/api/search?q=furniture", "198.51.100.63");
  expectRefusalHeaders(api, "the API");
  expect(api.headers()["access-control-allow-origin"]).toBe("*");
  expect((await api.json()).error).toMatchObject({ code: "rate_limited", refused: "searches" });

  const feed = await refusedOf("/changes.xml", "198.51.100.64");
  expectRefusalHeaders(feed, "a feed");
  expect(feed.headers()["access-control-allow-origin"]).toBe("*");
  expect((await feed.json()).error).toMatchObject({ code: "rate_limited", refused: "searches" });

  const sitemap = await refusedOf("/sitemap.xml", "198.51.100.65");
  expectRefusalHeaders(sitemap, "a sitemap");
  expect((await sitemap.json()).error).toMatchObject({ code: "rate_limited", refused: "searches" });

  const badge = await refusedOf("/entity/nobody.test/badge.svg", "198.51.100.66");
  expectRefusalHeaders(badge, "the badge");
  expect(badge.headers()["content-type"]).toMatch(/^image\/svg\+xml/);
  expect(await badge.text()).toMatch(/^<svg/);
  // Another client's badge is drawn.
  const other = await request.get(`${base}/entity/nobody.test/badge.svg`, { headers: { "x-forwarded-for": "198.51.100.67" } });
  expect(other.status()).toBe(200);

  // A preview image is drawn from the cache, annotated from the index: a store read too.
  const preview = await refusedOf("/entity/alice.example/preview.png", "198.51.100.69");
  expectRefusalHeaders(preview, "a preview image");
});

test("a lookup page past the client's cold lookups is refused as every page is, before it is rendered", async ({ request }) => {
  // `coldLookups`: 30 a minute for each client; each name below is looked up afresh.
  let refused: APIResponse | null = null;
  let asked = 0;
  while (!refused && asked < 40) {
    const r = await request.get(`${base}/entity/cold${asked++}.test`, { headers: { "x-forwarded-for": "198.51.100.70" } });
    if (r.status() === 429) refused = r;
  }
  if (!refused) throw new Error("40 cold lookups were never refused");
  expect(asked).toBe(31);
  expectRefusalHeaders(refused, "a lookup page");
  expect(refused.headers()["ratelimit"]).toMatch(/"cold";r=0;t=\d+/);
  expect(refused.headers()["content-type"]).toMatch(/^text\/html/);
  expect(await refused.text()).toContain("Too many lookups");
});

test("the re-check, a form, goes back to its page naming the limit, with the client's RateLimit headers", async ({ request }) => {
  const form = { form: { domain: "minimal.test" }, headers: { "x-forwarded-for": "198.51.100.68" }, maxRedirects: 0 };
  // `refreshes`: 5 a minute for each client.
  let last: APIResponse | null = null;
  for (let i = 0; i < 6; i++) last = await request.post(`${base}/recheck`, form);
  if (!last) throw new Error("no answer");
  expect(last.status()).toBe(303);
  expect(last.headers().location).toMatch(/^\/entity\/minimal\.test\?recheck=refreshes&retry=\d+$/);
  expect(last.headers()["ratelimit-policy"]).toMatch(/"cold";q=\d+;w=60/);
  expect(last.headers()["ratelimit"]).toMatch(/"cold";r=\d+;t=\d+/);
  expect(last.headers()["x-content-type-options"]).toBe("nosniff");
  expect(last.headers()["x-frame-options"]).toBe("DENY");
  expect(last.headers()["referrer-policy"]).toBe("strict-origin-when-cross-origin");
  expect(last.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
});
