import { expect, test } from "./helpers/test";

/**
 * hostile.test puts </script>, <img onerror>, <svg onload>, U+2028/U+2029, bidi overrides and
 * javascript: URLs in every displayed field of an entity, a verified property, a verified credential
 * and its issuer. Nothing may execute, no markup may appear, and JSON-LD must round-trip.
 */
for (const path of ["/search?q=hostile.test", "/entity/hostile.test"]) {
  test(`hostile strings stay text on ${path}`, async ({ page, request }) => {
    const dialogs: string[] = [];
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(path);
    await expect(page.locator('[data-testid="claim"]')).toHaveCount(5);
    await expect(page.locator('script[type="application/ld+json"]')).toHaveCount(1);
    expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    const main = page.locator("main");
    // No element made from a publisher's text; the entity page's own Share and Follow sections (the
    // badge and the fields holding snippets, components/share.tsx and follow.tsx) are the app's, and
    // show no publisher text.
    const made = await main.evaluate((m) =>
      [...m.querySelectorAll("img, svg, iframe, b, textarea")]
        .filter((e) => !e.closest('[data-testid="share"], [data-testid="follow"]'))
        .map((e) => e.outerHTML),
    );
    expect(made).toEqual([]);
    if (path.startsWith("/entity")) {
      const share = page.getByTestId("share");
      await expect(share.locator("img")).toHaveAttribute("src", /^\/entity\/hostile\.test\/badge\.svg\?v=/);
      await expect(share.locator("textarea")).toHaveCount(2);
      await expect(share).not.toContainText("<script");
      const follow = page.getByTestId("follow");
      await expect(follow.locator("textarea")).toHaveCount(3);
      await expect(follow).not.toContainText("<script");
    }
    expect(await main.locator("script:not([type='application/ld+json'])").count()).toBe(0);
    const hrefs = await main.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""));
    for (const href of hrefs) expect(href).toMatch(/^(https?:\/\/|\/)/);
    await expect(page.getByRole("heading", { level: path.startsWith("/entity") ? 1 : 2 }).first()).toHaveText(
      "</script><script>window.__pwned='script'</script>",
    );
    await expect(main).toContainText(`<img src=x onerror="window.__pwned='img'">`);
    const api = await (await request.get("/api/resolve?q=hostile.test")).json();
    const raw = await page.locator('script[type="application/ld+json"]').evaluate((e) => JSON.parse(e.textContent ?? "null"));
    // The entity's own page wraps it in a ProfilePage (docs/decisions.md#json-ld).
    const ld = raw["@type"] === "ProfilePage" ? Object.assign({ "@context": raw["@context"] }, raw.mainEntity) : raw;
    expect(ld).toEqual(api.results[0].jsonld);
    expect(JSON.stringify(ld)).toContain("\u2028");
    await page.screenshot({ path: `test-results/screens/hostile-${path.startsWith("/entity") ? "entity" : "search"}.png`, fullPage: true });
  });
}

test("lone surrogates and bidi controls: the server's HTML is kept, the text isolated, the title plain", async ({ page }) => {
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("/entity/bidi.test");
  await expect(page.getByTestId("entity-header")).toBeVisible();
  // A lone surrogate left in the text made React discard the server HTML (hydration error #418).
  await page.waitForTimeout(500);
  expect(errors).toEqual([]);
  await expect(page.locator(".entity-description")).toContainText("here: \ufffd and one there: \ufffd;");
  await expect(page.locator(".entity-details dd").first()).toHaveText("\ud83d\ude00 a whole emoji, then half of one: \ufffd");
  // The name keeps its characters but sits in its own <bdi>, so its override cannot reorder the page.
  const name = page.getByRole("heading", { level: 1 }).locator("bdi");
  await expect(name).toHaveText("Bidi \u202eevil\u202c Person \u2066isolate");
  expect(await name.evaluate((e) => getComputedStyle(e).unicodeBidi)).toBe("isolate");
  // The title has nothing to isolate it with: the controls are gone.
  expect(await page.title()).toMatch(/^Bidi evil Person isolate \(bidi\.test\)/);
});
