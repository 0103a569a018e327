import { expect, test, type Page } from "@playwright/test";

async function jsonLdOf(page: Page): Promise<unknown[]> {
  return page.locator('script[type="application/ld+json"]').evaluateAll((els) => els.map((e) => JSON.parse(e.textContent ?? "null")));
}

for (const domain of ["alice.example", "acme.example", "hartley-law.example", "dana.test", "mallory.example"]) {
  test(`JSON-LD of ${domain} is the API's, parsed back from the page`, async ({ page, request }) => {
    const api = await (await request.get(`/api/resolve?q=${domain}`)).json();
    await page.goto(`/entity/${domain}`);
    await expect(page.locator('script[type="application/ld+json"]')).toHaveCount(1);
    expect(await jsonLdOf(page)).toEqual([api.results[0].jsonld]);
  });
}

test("JSON-LD for alice is exactly SPEC §10", async ({ page }) => {
  await page.goto("/entity/alice.example");
  await expect(page.locator('script[type="application/ld+json"]')).toHaveCount(1);
  const [ld] = (await jsonLdOf(page)) as Record<string, unknown>[];
  expect(ld).toMatchObject({ "@context": "https://schema.org", "@type": "Person", identifier: "§:entity:alice.example", sameAs: ["https://blog.alice.example/", "https://social.example/@alice"] });
  expect((ld?.hasCredential as unknown[]).length).toBe(3);
});

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
    const inHead = await page.locator('head script[type="application/ld+json"]').evaluateAll((els) => els.map((e) => JSON.parse(e.textContent ?? "null")));
    expect(inHead).toEqual([api.results[0].jsonld]);
    await expect(page.locator('script[type="application/ld+json"]')).toHaveCount(1);
    await expect(page.getByTestId("claim-pending")).toHaveCount(0);
  });
  test("cannot name another page's entity through the request header", async ({ page }) => {
    await page.setExtraHTTPHeaders({ "x-ident-entity": "mallory.example" });
    await page.goto("/");
    expect(await page.locator('script[type="application/ld+json"]').count()).toBe(0);
  });
});
