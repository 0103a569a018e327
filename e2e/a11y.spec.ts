import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page, type Request, type Response } from "@playwright/test";

const pages = [
  ["home", "/"],
  ["results", "/search?q=mallory.example"],
  ["entity", "/entity/alice.example"],
  ["index search", "/search?q=acme+tools"],
  ["issuer", "/issuer/guild.example"],
  ["reasons", "/reasons"],
  // The check page spends fresh checks: e2e/publisher.spec.ts looks at it on a server of its own.
] as const;

/**
 * Opens `path` and waits until the network is idle. Should a request never end, the test fails naming
 * it (and its status, when headers came) rather than at the test's timeout with nothing to go on.
 */
async function settled(page: Page, path: string) {
  const open = new Map<Request, string>();
  const sent = (r: Request) => open.set(r, `${r.method()} ${r.url()}${r.headers()["rsc"] ? " (RSC)" : ""}`);
  const answered = (r: Response) => open.set(r.request(), `${open.get(r.request())} → HTTP ${r.status()}, body still open`);
  const done = (r: Request) => open.delete(r);
  page.on("request", sent).on("response", answered).on("requestfinished", done).on("requestfailed", done);
  try {
    await page.goto(path);
    await page.waitForLoadState("networkidle", { timeout: 20_000 }).catch(() => {
      throw new Error(`${path}: the network was still busy after 20 s with ${[...open.values()].join("; ") || "no request of this page"}`);
    });
  } finally {
    page.off("request", sent).off("response", answered).off("requestfinished", done).off("requestfailed", done);
  }
}

// The search and issuer pages show what the index holds: these lookups put it there.
test.beforeAll(async ({ request }) => {
  for (const q of ["acme.example", "alice.example", "bob.example"]) expect((await request.get(`/api/resolve?q=${q}`)).status()).toBe(200);
});

for (const scheme of ["light", "dark"] as const) {
  for (const [name, path] of pages) {
    test(`axe finds no violations on the ${name} page (${scheme})`, async ({ page }) => {
      await page.emulateMedia({ colorScheme: scheme });
      await settled(page, path);
      await expect(page.locator('[data-testid="claim-pending"]')).toHaveCount(0);
      const results = await new AxeBuilder({ page }).analyze();
      expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
    });
  }
}

// WCAG 2.5.3 (label in name; Lighthouse's label-content-name-mismatch): the brand link's name begins
// with the words it shows, then ", home" (components/site-header.tsx), as Chromium computes it.
test("the brand link's accessible name begins with the words it shows", async ({ page }) => {
  await page.goto("/");
  const brand = page.getByRole("banner").getByRole("link");
  await expect(brand).toHaveAccessibleName("ident resolver, home");
  // What is seen: its text without what is visually hidden.
  const shown = await brand.evaluate((a) => {
    const copy = a.cloneNode(true) as HTMLElement;
    for (const hidden of copy.querySelectorAll(".visually-hidden")) hidden.remove();
    return (copy.textContent ?? "").replace(/\s+/g, " ").trim();
  });
  expect(shown).toBe("ident resolver");
});

for (const width of [360, 375, 1280]) {
  test(`no horizontal overflow, and screenshots, at ${width} px`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    for (const [name, path] of pages) {
      await settled(page, path);
      await expect(page.locator('[data-testid="claim-pending"]')).toHaveCount(0);
      // Nothing wider than the viewport: no horizontal scrolling at any width.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `test-results/screens/${name}-${width}.png`, fullPage: true });
    }
    if (width === 1280) {
      await page.emulateMedia({ colorScheme: "dark" });
      await page.goto("/search?q=mallory.example");
      await expect(page.locator('[data-testid="claim-pending"]')).toHaveCount(0);
      await page.screenshot({ path: "test-results/screens/results-dark-1280.png" });
      await page.emulateMedia({ colorScheme: "light" });
    }
    // `UPDATE_DOCS=1 npm run test:e2e` refreshes the README's screenshot.
    if (width === 1280 && process.env.UPDATE_DOCS === "1") {
      await page.goto("/search?q=mallory.example");
      await expect(page.locator('[data-testid="claim-pending"]')).toHaveCount(0);
      await page.screenshot({ path: "docs/result-page.png" });
    }
  });
}
