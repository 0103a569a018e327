import { expect, test } from "@playwright/test";

const search = (q: string) => `/search?q=${encodeURIComponent(q)}`;

test("verified claims: property with its link out, credentials with the issuer's title, connection", async ({ page }) => {
  await page.goto(search("alice.example"));
  const verified = page.locator('[data-testid="claim"][data-verified="true"]');
  await expect(verified).toHaveCount(5);
  const blog = verified.filter({ hasText: "Workshop Notes" });
  await expect(blog.getByRole("link", { name: "Workshop Notes" })).toHaveAttribute("href", "https://blog.alice.example/");
  await expect(blog.getByRole("link")).toHaveAttribute("rel", "nofollow ugc noopener noreferrer");
  await expect(verified.filter({ hasText: "Member since 2019" })).toContainText(
    "Issued by The Makers Guild (guild.example) · Guild members",
  );
  await expect(page.getByTestId("unverified-property")).toBeHidden();
  await expect(page.getByTestId("source").first()).toContainText("From the JSON document at https://alice.example/ident.json");
});

test("every unverified reason says why in plain words and what the publisher can do, set apart", async ({ page }) => {
  await page.goto(search("mallory.example"));
  const unverified = page.locator('[data-testid="claim"][data-verified="false"]');
  await expect(unverified).toHaveCount(12);
  const reasons = await unverified.evaluateAll((els) => els.map((e) => e.getAttribute("data-reason")));
  expect(reasons.sort()).toEqual(
    [
      "duplicate",
      "entity_mismatch",
      "id_mismatch",
      "invalid_document",
      "invalid_entry",
      "invalid_entry",
      "no_backlink",
      "not_found",
      "not_listed",
      "not_listed",
      "unreachable",
      "unsafe_url",
    ].sort(),
  );
  const mismatch = unverified.filter({ hasText: "@bob@guild.example/members" });
  await expect(mismatch).toContainText("guild.example's credential document names §:entity:bob.example, not this entity");
  await expect(mismatch).toContainText("What the publisher can do:");
  // Unverified claims sit in their own "Not verified" lists, never among the verified ones.
  for (const kind of ["property", "credential", "connection"]) {
    await expect(page.getByTestId(`unverified-${kind}`).getByRole("heading", { name: "Not verified" })).toBeVisible();
  }
  await expect(page.locator('[data-testid="claim"][data-verified="true"]')).toHaveCount(0);
});

test("a rejected entity explains itself and what to do", async ({ page }) => {
  await page.goto(search("borrowed-id.test"));
  const header = page.getByTestId("entity-header");
  await expect(header).toHaveAttribute("data-status", "rejected");
  await expect(header).toContainText("claims to be alice.example");
  await expect(header).toContainText("What the publisher can do");
  expect(await page.locator('script[type="application/ld+json"]').count()).toBe(0);
});

test("a not-found entity explains where it looked", async ({ page }) => {
  await page.goto(search("bad-embeds.test"));
  await expect(page.getByTestId("entity-header")).toHaveAttribute("data-status", "not_found");
  await expect(page.getByTestId("entity-header")).toContainText('id="ident-hub"');
});

test("a timed-out entity says so", async ({ page }) => {
  await page.goto(search("slow.test"));
  await expect(page.getByTestId("entity-header")).toHaveAttribute("data-status", "timeout");
  await expect(page.getByTestId("entity-header")).toContainText("did not arrive in time");
});

test("an entity read from its HTML embed says so", async ({ page }) => {
  await page.goto(search("dana.test"));
  await expect(page.getByTestId("entity-header").getByTestId("source-via")).toHaveText("HTML embed");
  await expect(page.locator('[data-testid="claim"][data-verified="true"]')).toHaveCount(2);
});

test("the entity page is the canonical, shareable, indexable page", async ({ page }) => {
  await page.goto("/entity/acme.example");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Acme Tools");
  expect(await page.locator("h1").count()).toBe(1);
  await expect(page.locator('link[rel="canonical"]')).toHaveAttribute("href", "https://ident.example/entity/acme.example");
  await expect(page.locator('meta[property="og:title"]')).toHaveAttribute("content", "Acme Tools (acme.example)");
  // docs/decisions.md#crawlers: a shared link previews with the entity's own image.
  await expect(page.locator('meta[name="twitter:card"]')).toHaveAttribute("content", "summary_large_image");
  await expect(page.locator('meta[property="og:image"]')).toHaveAttribute(
    "content",
    "https://ident.example/entity/acme.example/preview.png",
  );
  await expect(page.locator('meta[name="robots"]')).toHaveAttribute("content", /^index/);
  await expect(page.getByText("Legal name")).toBeVisible();
  await expect(page.getByText("Acme Tools, Inc.")).toBeVisible();
  await page.goto(search("acme.example"));
  await expect(page.locator('meta[name="robots"]')).toHaveAttribute("content", /noindex/);
});

test("a stale copy says so while it is refreshed", async ({ page }) => {
  // The e2e server keeps documents fresh for 3 s (playwright.config.ts).
  await page.goto(search("carol.example"));
  await expect(page.getByTestId("entity-header")).toBeVisible();
  await expect(page.getByTestId("stale")).toHaveCount(0);
  await page.waitForTimeout(3_500);
  await page.goto(search("carol.example"));
  await expect(page.getByTestId("entity-header").getByTestId("stale")).toHaveText("Stale copy, refreshing");
});

// Each face a page uses (family, size, weight, style) is a font lookup the browser makes, and waits
// for, before it lays the page out: the stylesheet keeps to one family, two weights and four sizes
// (docs/decisions.md#cold-pages). Counted as Chromium computes them, over the text it shows.
test("the pages use few faces: two weights, one family for text and one for code", async ({ page }) => {
  for (const url of ["/", "/entity/alice.example", search("mallory.example"), "/issuer/guild.example"]) {
    await page.goto(url);
    await expect(page.locator("main")).toBeVisible();
    await expect(page.getByTestId("claim-pending")).toHaveCount(0);
    const faces = await page.evaluate(() => {
      const seen = new Set<string>();
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const el = n.parentElement;
        if (!el || !n.textContent?.trim() || !el.checkVisibility()) continue;
        const s = getComputedStyle(el);
        seen.add(`${s.fontFamily} ${s.fontSize} ${s.fontWeight} ${s.fontStyle}`);
      }
      return [...seen].sort();
    });
    const why = `${url}: ${faces.join("; ")}`;
    for (const face of faces) {
      expect(face.startsWith("system-ui, sans-serif ") || face.startsWith("ui-monospace, monospace "), why).toBe(true);
      expect(["400", "600"], why).toContain(face.split(" ").at(-2));
    }
    expect(faces.length, why).toBeLessThanOrEqual(8);
  }
});
