import type { Page } from "@playwright/test";
import { expect, test } from "./helpers/test";
import jsonld from "jsonld";

/** An entity page's JSON-LD is a ProfilePage around the entity's (docs/decisions.md#json-ld): the entity's, as the API gives it. */
function entityOf(ld: unknown): unknown {
  const o = ld as Record<string, unknown> | null;
  return o?.["@type"] === "ProfilePage" ? Object.assign({ "@context": o["@context"] }, o["mainEntity"]) : ld;
}

async function jsonLdOf(page: Page, where = "", raw = false): Promise<unknown[]> {
  const lds = await page
    .locator(`${where} script[type="application/ld+json"]`)
    .evaluateAll((els) => els.map((e) => JSON.parse(e.textContent ?? "null")));
  return raw ? lds : lds.map(entityOf);
}

/** The JSON-LD inside the <head> of an HTML text, as a program reading the page would find it. */
function headJsonLdOf(html: string, raw = false): unknown[] {
  const head = html.slice(0, html.indexOf("</head>"));
  return [...head.matchAll(/<script type="application\/ld\+json"[^>]*>([^<]*)<\/script>/g)].map((m) => {
    const ld: unknown = JSON.parse(m[1]!);
    return raw ? ld : entityOf(ld);
  });
}

const HEADLESS_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36";

for (const domain of ["alice.example", "acme.example", "hartley-law.example", "dana.test", "mallory.example"]) {
  test(`JSON-LD of ${domain} is the API's, parsed back from the page`, async ({ page, request }) => {
    const api = await (await request.get(`/api/resolve?q=${domain}`)).json();
    await page.goto(`/entity/${domain}`);
    await expect(page.locator('script[type="application/ld+json"]')).toHaveCount(1);
    // The API call cached every document, so even a streaming browser gets it in the head (docs/decisions.md#interfaces).
    expect(await jsonLdOf(page, "head")).toEqual([api.results[0].jsonld]);
  });
}

test("JSON-LD for alice is exactly what docs/decisions.md#json-ld lists", async ({ page }) => {
  await page.goto("/entity/alice.example");
  await expect(page.locator('script[type="application/ld+json"]')).toHaveCount(1);
  const [ld] = (await jsonLdOf(page)) as Record<string, unknown>[];
  expect(ld).toMatchObject({
    "@context": "https://schema.org",
    "@type": "Person",
    identifier: "§:entity:alice.example",
    sameAs: ["https://blog.alice.example/", "https://social.example/@alice"],
  });
  expect((ld?.hasCredential as unknown[]).length).toBe(3);
});

test("an entity's own page is a ProfilePage whose mainEntity is the entity, modified at its last check; result lists are not", async ({
  page,
  request,
}) => {
  const api = await (await request.get("/api/resolve?q=acme.example")).json();
  await page.goto("/entity/acme.example");
  const [ld] = (await jsonLdOf(page, "head", true)) as Record<string, unknown>[];
  const organization = Object.fromEntries(Object.entries(api.results[0].jsonld as object).filter(([k]) => k !== "@context"));
  expect(ld).toEqual({
    "@context": "https://schema.org",
    "@type": "ProfilePage",
    url: "https://ident.example/entity/acme.example",
    dateModified: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    mainEntity: organization,
  });
  expect(organization["@type"]).toBe("Organization");
  // The last check: the API's, or a later one (documents here go stale after 3 s and are checked again).
  const checked = Date.parse(api.results[0].entity.last_checked_at ?? api.results[0].cache.fetched_at);
  expect(Date.parse(String(ld?.["dateModified"]))).toBeGreaterThanOrEqual(checked);
  expect(Date.parse(String(ld?.["dateModified"]))).toBeLessThanOrEqual(Date.now());
  await page.goto(`/search?q=${encodeURIComponent("§:property:jointventure.example")}`);
  const lds = (await jsonLdOf(page, "", true)) as Record<string, unknown>[];
  expect(lds.map((l) => l["@type"])).toEqual(["Organization", "Organization", "Organization"]);
});

/**
 * The schema.org context as a JSON-LD processor reads it, served here: nothing is downloaded. Its one
 * rule that matters for these terms: every term is in the schema.org vocabulary.
 */
const documentLoader = async (url: string) => {
  if (!/^https?:\/\/schema\.org\/?$/.test(url)) throw new Error(`no document for ${url}`);
  return { contextUrl: undefined, documentUrl: url, document: { "@context": { "@vocab": "https://schema.org/" } } };
};
const S = (term: string) => `https://schema.org/${term}`;

for (const [domain, kind] of [
  ["alice.example", "Person"],
  ["acme.example", "Organization"],
] as const) {
  test(`a JSON-LD processor (jsonld.js) reading ${domain}'s page as a crawler finds a ProfilePage whose mainEntity is the ${kind}`, async ({
    request,
  }) => {
    const html = await (
      await request.get(`/entity/${domain}`, { headers: { "user-agent": "Googlebot/2.1 (+http://www.google.com/bot.html)" } })
    ).text();
    const docs = headJsonLdOf(html, true);
    expect(docs).toHaveLength(1);
    const [node] = (await jsonld.expand(docs[0] as jsonld.JsonLdDocument, { documentLoader })) as Record<string, unknown[]>[];
    expect(node?.["@type"]).toEqual([S("ProfilePage")]);
    const [main] = (node?.[S("mainEntity")] ?? []) as Record<string, unknown[]>[];
    expect(main?.["@type"]).toEqual([S(kind)]);
    expect(main?.[S("identifier")]).toEqual([{ "@value": `§:entity:${domain}` }]);
    expect(node?.[S("dateModified")]).toHaveLength(1);
  });
}

test("a property query has one JSON-LD per owner", async ({ page }) => {
  await page.goto(`/search?q=${encodeURIComponent("§:property:jointventure.example")}`);
  await expect(page.getByTestId("result")).toHaveCount(3);
  const lds = (await jsonLdOf(page)) as { identifier: string }[];
  expect(lds.map((l) => l.identifier)).toEqual(["§:entity:acme.example", "§:entity:beta.example", "§:entity:gamma.example"]);
});

test.describe("a crawler", () => {
  test.use({ userAgent: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" });
  test("gets the entity page whole, with its JSON-LD once, in the document head", async ({ page, request }) => {
    const api = await (await request.get("/api/resolve?q=acme.example")).json();
    await page.goto("/entity/acme.example");
    expect(await jsonLdOf(page, "head")).toEqual([api.results[0].jsonld]);
    await expect(page.locator('script[type="application/ld+json"]')).toHaveCount(1);
    await expect(page.getByTestId("claim-pending")).toHaveCount(0);
  });
  test("cannot name another page's entity through the request headers", async ({ page }) => {
    await page.setExtraHTTPHeaders({
      "x-ident-url": encodeURIComponent("/entity/mallory.example"),
      "x-ident-page": "entity%3Amallory.example",
      "x-ident-refresh": "1",
    });
    await page.goto("/");
    expect(await page.locator('script[type="application/ld+json"]').count()).toBe(0);
    await page.goto("/entity/alice.example");
    expect(((await jsonLdOf(page)) as { identifier: string }[]).map((l) => l.identifier)).toEqual(["§:entity:alice.example"]);
  });
});

test("a program fetching a page finds the JSON-LD in the head of the HTML", async ({ request }) => {
  const api = await (await request.get("/api/resolve?q=hartley-law.example")).json();
  const entity = await request.get("/entity/hartley-law.example", { headers: { "user-agent": "curl/8.14.1" } });
  expect(headJsonLdOf(await entity.text())).toEqual([api.results[0].jsonld]);
  const owners = await request.get(`/search?q=${encodeURIComponent("§:property:jointventure.example")}`, {
    headers: { "user-agent": "python-requests/2.32" },
  });
  expect((headJsonLdOf(await owners.text()) as { identifier: string }[]).map((l) => l.identifier)).toEqual([
    "§:entity:acme.example",
    "§:entity:beta.example",
    "§:entity:gamma.example",
  ]);
});

test.describe("a headless browser", () => {
  test.use({ userAgent: HEADLESS_UA });
  test("gets a cold entity page whole: the slow claim settled, its JSON-LD once, in the head", async ({ page }) => {
    // unhurried.test's issuer answers after 2 s, and no other test asks for it: the cache is cold.
    await page.goto("/entity/unhurried.test");
    await expect(page.getByTestId("claim-pending")).toHaveCount(0);
    await expect(page.locator('script[type="application/ld+json"]')).toHaveCount(1);
    const [ld] = (await jsonLdOf(page, "head")) as { identifier: string; hasCredential: unknown[] }[];
    expect(ld?.identifier).toBe("§:entity:unhurried.test");
    expect(ld?.hasCredential).toHaveLength(1);
  });
});

test("a browser on a cold page gets the JSON-LD in the body once the claims settle, and in the head once they are cached", async ({
  page,
}) => {
  // dawdle.test's issuer answers after 2 s, and no other test asks for it: the cache is cold.
  await page.goto("/entity/dawdle.test", { waitUntil: "commit" });
  await expect(page.getByTestId("entity-header")).toBeVisible();
  await expect(page.getByTestId("claim-pending")).toHaveCount(1);
  await expect(page.getByTestId("claim-pending")).toHaveCount(0);
  await expect(page.locator('script[type="application/ld+json"]')).toHaveCount(1);
  expect(await jsonLdOf(page, "head")).toEqual([]);
  const [streamed] = (await jsonLdOf(page, "body")) as { hasCredential: unknown[] }[];
  expect(streamed?.hasCredential).toHaveLength(1);
  await page.reload();
  await expect(page.locator('script[type="application/ld+json"]')).toHaveCount(1);
  expect(await jsonLdOf(page, "head")).toEqual([streamed]);
});

test.describe("a crawler on a large page", () => {
  const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
  /** What a crawler that runs no script reads: the head's JSON-LD, the claim cards in the HTML, and anything left for a script to place. */
  const read = (html: string) => ({
    inHead: headJsonLdOf(html).length,
    claims: html.match(/data-testid="claim"/g)?.length ?? 0,
    pendingBoundaries: html.match(/<!--\$\?-->/g)?.length ?? 0,
    scriptMoves: html.match(/\$RC\(/g)?.length ?? 0,
    pending: html.match(/data-testid="claim-pending"/g)?.length ?? 0,
  });
  test("gets a 20-claim page whole, cold and warm: JSON-LD in the head, every claim in the HTML, nothing placed by script", async ({
    request,
  }) => {
    const whole = { inHead: 1, claims: 20, pendingBoundaries: 0, scriptMoves: 0, pending: 0 };
    const headers = { "user-agent": GOOGLEBOT };
    // crowded.test is asked for by no other test: the first request is cold.
    const cold = await request.get("/entity/crowded.test", { headers });
    expect((await cold.body()).length).toBeGreaterThan(20_000);
    expect(read(await cold.text())).toEqual(whole);
    const pages = [await request.get("/entity/crowded.test", { headers }), await request.get("/entity/crowded.test", { headers })];
    for (const p of pages) expect(read(await p.text())).toEqual(whole);
    // Warm pages come from the page cache for crawlers too.
    expect(pages.map((p) => p.headers()["x-ident-page-cache"])).toEqual(["miss", "hit"]);
  });
});
