import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";

const pages = [
  ["home", "/"],
  ["results", "/search?q=mallory.example"],
  ["entity", "/entity/alice.example"],
  ["index search", "/search?q=acme+tools"],
  ["issuer", "/issuer/guild.example"],
  ["reasons", "/reasons"],
  // The check page spends fresh checks: e2e/publisher.spec.ts looks at it on a server of its own.
] as const;

// The search and issuer pages show what the index holds: these lookups put it there.
test.beforeAll(async ({ request }) => {
  for (const q of ["acme.example", "alice.example", "bob.example"]) expect((await request.get(`/api/resolve?q=${q}`)).status()).toBe(200);
});

for (const scheme of ["light", "dark"] as const) {
  for (const [name, path] of pages) {
    test(`axe finds no violations on the ${name} page (${scheme})`, async ({ page }) => {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(path);
      await page.waitForLoadState("networkidle");
      await expect(page.locator('[data-testid="claim-pending"]')).toHaveCount(0);
      const results = await new AxeBuilder({ page }).analyze();
      expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
    });
  }
}

for (const width of [360, 375, 1280]) {
  test(`no horizontal overflow, and screenshots, at ${width} px`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    for (const [name, path] of pages) {
      await page.goto(path);
      await page.waitForLoadState("networkidle");
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
