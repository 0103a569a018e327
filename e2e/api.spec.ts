/**
 * The API for builders (docs/api.md), as builders use it: every answer checked against the server's
 * own OpenAPI document (helpers/test.ts), validators and 304s, the rate-limit headers read by a
 * Structured Fields parser, a script on another origin in the browser (preflight, CORS, no
 * credentials), and the feeds read by a feed parser.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import SwaggerParser from "@apidevtools/swagger-parser";
import { parseFeed } from "@rowanmanning/feed-parser";
import { parseList } from "structured-headers";
import type { APIRequestContext } from "@playwright/test";
import { expect, test } from "./helpers/test";

const items = (value: string | undefined) => parseList(value ?? "").map(([name, params]) => [name, Object.fromEntries(params)] as const);

test("the OpenAPI document is valid 3.1, served with CORS and a validator", async ({ request }) => {
  const r = await request.get("/api/openapi.json");
  expect(r.status()).toBe(200);
  expect(r.headers()["access-control-allow-origin"]).toBe("*");
  const doc = await r.json();
  await SwaggerParser.validate(doc);
  expect(doc.openapi).toBe("3.1.0");
  expect((await request.get("/api/openapi.json", { headers: { "if-none-match": r.headers().etag! } })).status()).toBe(304);
});

test("every route answers as its description says: 200, 400, 404 (each checked against the document)", async ({ request }) => {
  expect((await request.get("/api/resolve?q=alice.example")).status()).toBe(200);
  expect((await request.get("/api/resolve?q=not%20a%20query")).status()).toBe(400);
  expect((await request.get("/api/resolve")).status()).toBe(400);
  expect((await request.get("/api/resolve?q=alice.example&refresh=yes")).status()).toBe(400);
  expect((await request.get("/api/search?q=alice")).status()).toBe(200);
  expect((await request.get(`/api/search?q=${"x".repeat(201)}`)).status()).toBe(400);
  expect((await request.get("/api/search?q=guild&cursor=bogus")).status()).toBe(400);
  expect((await request.get("/api/entity/alice.example/history")).status()).toBe(200);
  expect((await request.get("/api/entity/never-seen.example/history")).status()).toBe(404);
  expect((await request.get("/api/entity/%FF/history")).status()).toBe(400);
  expect((await request.head("/api/search?q=alice")).status()).toBe(200);
  const other = await request.get("/api/nothing-here");
  expect(other.status()).toBe(404);
  expect(other.headers()["access-control-allow-origin"]).toBe("*");
});

/**
 * Asks `path` with an If-None-Match made from its current tag. The answer may change in between (a
 * lookup's freshness ran out, another spec recorded a check): a 200 then brings a new tag, and the
 * question is asked again with that one, three times at most. Answers the last answer and its tag.
 */
async function askWithTag(request: APIRequestContext, path: string, header: (etag: string) => string) {
  let etag = (await request.get(path)).headers().etag ?? "";
  for (let tries = 1; ; tries++) {
    const answer = await request.get(path, { headers: { "if-none-match": header(etag) } });
    const fresh = answer.headers().etag;
    if (answer.status() !== 200 || fresh === etag || fresh === undefined || tries === 3) return { answer, etag };
    etag = fresh;
  }
}

test("a 200 carries a content ETag; If-None-Match with it answers 304 with no body, on every route", async ({ request }) => {
  for (const path of ["/api/resolve?q=alice.example", "/api/search?q=alice", "/api/entity/alice.example/history"]) {
    const first = await request.get(path);
    expect(first.headers().etag, path).toMatch(/^"[A-Za-z0-9_-]{27}(?:-gzip)?"$/);
    expect(first.headers()["cache-control"], path).toMatch(/max-age=\d+/);
    const same = await askWithTag(request, path, (etag) => etag);
    expect(same.answer.status(), path).toBe(304);
    expect((await same.answer.body()).length).toBe(0);
    expect(same.answer.headers().etag).toBe(same.etag);
    expect((await askWithTag(request, path, (etag) => `"other", W/${etag}`)).answer.status(), path).toBe(304);
    expect((await request.get(path, { headers: { "if-none-match": '"other"' } })).status(), path).toBe(200);
  }
});

test("RateLimit and RateLimit-Policy name the client's cold-lookup, search and reads limits; a search spends one; no shared cache gets one client's counters", async ({
  request,
}) => {
  // What is left is said on answers no shared cache keeps: an empty search is refused, spending nothing.
  const refusedSearch = () => request.get("/api/search?q=");
  const before = await refusedSearch();
  expect(before.status()).toBe(400);
  const policy = items(before.headers()["ratelimit-policy"]);
  expect(policy.map(([name]) => name)).toEqual(["cold", "search", "reads"]);
  for (const [, params] of policy) expect(params).toEqual({ q: expect.any(Number), w: 60 });
  const left = (r: typeof before) => Number(items(r.headers().ratelimit).find(([name]) => name === "search")?.[1].r);
  const searched = await request.get("/api/search?q=acme");
  expect(searched.headers()["cache-control"]).toMatch(/^public/);
  expect(searched.headers()["ratelimit-policy"]).toBe(before.headers()["ratelimit-policy"]);
  expect(searched.headers().ratelimit).toBeUndefined();
  const after = await refusedSearch();
  // Another test may search meanwhile (the suite runs in parallel): one at least, from this one.
  expect(left(after)).toBeLessThan(left(before));
  expect(Number(items(after.headers().ratelimit).find(([name]) => name === "search")?.[1].t)).toBeGreaterThanOrEqual(0);
});

test.describe("from a page on another origin", () => {
  let server: Server;
  let origin: string;
  test.beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><title>a builder's page</title><p>elsewhere</p>");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  test.afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test("a script reads the API, its validators and limits after a preflight; credentials are refused", async ({ page, baseURL }) => {
    await page.goto(origin);
    const api = `${baseURL}/api/resolve?q=alice.example`;
    const seen = await page.evaluate(async (url) => {
      // If-None-Match is not a safelisted header: the browser asks first (a preflight).
      const a = await fetch(url, { headers: { "If-None-Match": '"not-this-one"' } });
      const body = (await a.json()) as { schema: string };
      let etag = a.headers.get("ETag");
      let b = await fetch(url, { headers: { "If-None-Match": etag ?? "" }, cache: "no-store" });
      // The answer changed in between (the first was a cold lookup, its freshness ran out, or another
      // test re-checked alice.example meanwhile): new content, a new tag; that one is asked with.
      for (let tries = 0; tries < 5 && b.status === 200 && b.headers.get("ETag") !== etag; tries++) {
        etag = b.headers.get("ETag");
        b = await fetch(url, { headers: { "If-None-Match": etag ?? "" }, cache: "no-store" });
      }
      const withCredentials = await fetch(url, { credentials: "include" }).then(
        () => "read",
        () => "refused",
      );
      // A header the preflight's answer does not allow: the browser does not send the request at all.
      const otherHeader = await fetch(url, { headers: { "X-Not-Allowed": "1" } }).then(
        () => "read",
        () => "refused",
      );
      // What is left is said on an answer no shared cache keeps: a bad query's.
      const refused = await fetch(`${url.split("?")[0]}?q=not%20a%20query`);
      return {
        status: a.status,
        schema: body.schema,
        etag,
        rateLimitOnShared: a.headers.get("RateLimit"),
        rateLimit: refused.headers.get("RateLimit"),
        policy: a.headers.get("RateLimit-Policy"),
        again: b.status,
        withCredentials,
        otherHeader,
      };
    }, api);
    // If-None-Match passed the preflight; a header it does not allow did not; credentials are never allowed with "*".
    expect(seen).toMatchObject({
      status: 200,
      schema: "ident-resolver/search@1",
      again: 304,
      withCredentials: "refused",
      otherHeader: "refused",
    });
    expect(seen.etag).toMatch(/^"/);
    expect(seen.rateLimitOnShared).toBeNull();
    expect(items(seen.rateLimit ?? "").map(([name]) => name)).toEqual(["cold", "search", "reads"]);
    expect(items(seen.policy ?? "").map(([name]) => name)).toEqual(["cold", "search", "reads"]);
  });

  test("a preflight is answered 204 with the methods and headers the API takes", async ({ request }) => {
    const r = await request.fetch("/api/search?q=x", {
      method: "OPTIONS",
      headers: {
        origin: "https://builder.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "if-none-match",
      },
    });
    expect(r.status()).toBe(204);
    expect(r.headers()).toMatchObject({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "GET, HEAD, OPTIONS",
      "access-control-max-age": "86400",
    });
    expect(r.headers()["access-control-allow-headers"]).toContain("If-None-Match");
    expect(r.headers()["access-control-allow-credentials"]).toBeUndefined();
  });
});

test.describe("feeds", () => {
  test("an entity's feed is Atom a feed parser reads, linked from its page, with a validator", async ({ request, page }) => {
    await request.get("/api/resolve?q=alice.example");
    const r = await request.get("/entity/alice.example/feed.xml");
    expect(r.status()).toBe(200);
    expect(r.headers()["content-type"]).toBe("application/atom+xml; charset=utf-8");
    const feed = parseFeed(await r.text());
    expect(feed.meta.type).toBe("atom");
    expect(feed.self).toMatch(/\/entity\/alice\.example\/feed\.xml$/);
    expect(feed.items.length).toBeGreaterThan(0);
    for (const item of feed.items) {
      expect(item.id).toMatch(/^urn:uuid:/);
      expect(item.url).toMatch(/\/entity\/alice\.example$/);
    }
    const dates = feed.items.map((i) => i.updated?.getTime() ?? 0);
    expect([...dates].sort((a, b) => b - a)).toEqual(dates);
    expect((await request.get("/entity/alice.example/feed.xml", { headers: { "if-none-match": r.headers().etag! } })).status()).toBe(304);
    await page.goto("/entity/alice.example");
    const link = page.locator('head link[rel="alternate"][type="application/atom+xml"]');
    await expect(link).toHaveAttribute("href", /\/entity\/alice\.example\/feed\.xml$/);
  });

  test("an issuer's feed lists the changes of the credentials it issues; an unknown entity has none", async ({ request, page }) => {
    await request.get("/api/resolve?q=alice.example");
    const r = await request.get("/issuer/guild.example/feed.xml");
    expect(r.status()).toBe(200);
    const feed = parseFeed(await r.text());
    expect(feed.items.length).toBeGreaterThan(0);
    expect(feed.items.every((i) => /\/entity\/[^/]+$/.test(i.url ?? ""))).toBe(true);
    await page.goto("/issuer/guild.example");
    await expect(page.locator('head link[rel="alternate"][type="application/atom+xml"]')).toHaveAttribute(
      "href",
      "/issuer/guild.example/feed.xml",
    );
    expect((await request.get("/entity/never-seen.example/feed.xml")).status()).toBe(404);
    expect((await request.get("/entity/not%20a%20domain/feed.xml")).status()).toBe(400);
  });
});
