import { expect, test } from "@playwright/test";

test("with a publisher that answers after 5 s, the entity and the other claims show before it finishes", async ({ page }) => {
  // Fresh query string so no cached copy of the slow document can help.
  await page.goto(`/search?q=patient.test&fresh=${Date.now()}`, { waitUntil: "commit" });
  await expect(page.getByTestId("entity-header").getByRole("heading")).toHaveText("Pat Ient");
  await expect(page.locator('[data-testid="claim"][data-verified="true"]').filter({ hasText: "Pat's blog" })).toBeVisible();
  await expect(page.locator('[data-testid="claim"][data-verified="true"]').filter({ hasText: "Quick member" })).toBeVisible();
  // The slow issuer has not answered yet: its card is still the placeholder.
  await expect(page.getByTestId("claim-pending")).toHaveCount(1);
  await expect(page.getByTestId("claim-pending")).toContainText("@pat@slow-issuer.test");
  // Then it arrives in place.
  await expect(page.locator('[data-testid="claim"][data-verified="true"]').filter({ hasText: "Slow member" })).toBeVisible({ timeout: 20_000 });
  await expect(page.getByTestId("claim-pending")).toHaveCount(0);
});
