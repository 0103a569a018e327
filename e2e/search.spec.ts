import { expect, test } from "@playwright/test";

test("a keyboard user searches from / to results", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Look up a decentralised identity");
  for (let i = 0; i < 8; i++) {
    await page.keyboard.press("Tab");
    if (await page.getByRole("searchbox", { name: "Look up an identity" }).evaluate((el) => el === document.activeElement)) break;
  }
  await expect(page.getByRole("searchbox", { name: "Look up an identity" })).toBeFocused();
  await page.keyboard.type("alice.example");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/search\?q=alice\.example$/);
  await expect(page.getByTestId("entity-header").getByRole("heading", { name: "Alice Moreau" })).toBeVisible();
  await expect(page.getByTestId("claim").filter({ hasText: "Workshop Notes" })).toHaveAttribute("data-verified", "true");
  // The first Tab on any page reaches the skip link, and it works.
  await page.goto("/search?q=alice.example");
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
});

test("an example on / is a clickable query into the sample network", async ({ page }) => {
  await page.goto("/");
  await page.getByRole("link", { name: "§:property:jointventure.example" }).click();
  await expect(page.getByTestId("result")).toHaveCount(3);
});

for (const [q, name] of [
  ["alice.example", "Alice Moreau"],
  ["https://acme.example/about", "Acme Tools"],
  ["§:entity:hartley-law.example", "Hartley & Osei"],
] as const) {
  test(`an entity query (${q}) shows one result`, async ({ page }) => {
    await page.goto(`/search?q=${encodeURIComponent(q)}`);
    await expect(page.getByTestId("result")).toHaveCount(1);
    await expect(page.getByTestId("entity-header").getByRole("heading")).toHaveText(name);
  });
}

test("a property query shows one result per owner, each saying whether it verifies", async ({ page }) => {
  await page.goto(`/search?q=${encodeURIComponent("§:property:jointventure.example")}`);
  const results = page.getByTestId("result");
  await expect(results).toHaveCount(3);
  await expect(results.nth(0).getByTestId("focus")).toHaveAttribute("data-verified", "true");
  await expect(results.nth(1).getByTestId("focus")).toHaveAttribute("data-verified", "true");
  await expect(results.nth(2).getByTestId("focus")).toHaveAttribute("data-verified", "false");
  await expect(results.nth(2).getByTestId("focus")).toContainText(
    "gamma.example's entity document does not list §:property:jointventure.example",
  );
});

test("a credential query shows the holder with that credential highlighted", async ({ page }) => {
  await page.goto(`/search?q=${encodeURIComponent("@alice@guild.example/members")}`);
  await expect(page.getByTestId("result")).toHaveCount(1);
  const focus = page.getByTestId("focus");
  await expect(focus).toHaveAttribute("data-verified", "true");
  await expect(focus).toContainText("Member since 2019");
  await expect(focus).toContainText("Issued by The Makers Guild");
});

test("a bad query re-shows the form with the reason, as HTTP 400", async ({ page }) => {
  const response = await page.goto("/search?q=http%3A%2F%2Falice.example");
  expect(response?.status()).toBe(400);
  await expect(page.getByRole("alert").filter({ hasText: "Only https" })).toContainText("Only https:// URLs can be looked up");
  await expect(page.getByRole("searchbox")).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByRole("searchbox")).toHaveValue("http://alice.example");
});

test("an entity page for something that is not a domain is a designed 404", async ({ page }) => {
  const response = await page.goto("/entity/not_a_domain");
  expect(response?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Nothing here");
});
