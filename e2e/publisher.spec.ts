/**
 * Publisher tools in a real browser (docs/publishing.md): the check page by keyboard, its copy button
 * under the CSP, the mail draft, the catalogue of reasons linked from the cards; "Re-check now"
 * without JavaScript, its rate limit, and a cross-site POST refused; the schemas as served.
 */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { ready, startServer } from "./helpers/server";

// A server of this file's own: each test names its client (one trusted hop), so the per-client limit
// of fresh checks is tested here without spending the shared server's (e2e/security.spec.ts counts it).
const PORT = 3105;
test.use({ baseURL: `http://localhost:${PORT}` });
// One worker: the server is this file's.
test.describe.configure({ mode: "serial", timeout: 120_000 });
let server: ChildProcess;
test.beforeAll(async ({ request }) => {
  test.setTimeout(120_000);
  // Each server keeps its index in memory: these tests are about the tools, not records.
  server = startServer([path.resolve("scripts/demo.js"), "--quiet"], {
    PORT: String(PORT),
    IDENT_TRUSTED_HOPS: "1",
    IDENT_PUBLIC_URL: "https://ident.example",
  });
  await ready(request, PORT, server);
});
test.afterAll(() => {
  server?.kill("SIGTERM");
});

let client = 0;
/** A client of its own (the fresh-check limit is per client). */
const asNewClient = async (page: Page) => page.setExtraHTTPHeaders({ "x-forwarded-for": `198.51.100.${++client}` });

test("the check page by keyboard: the form, the report by document, a snippet copied under the CSP, the mail draft", async ({
  page,
  context,
}) => {
  await asNewClient(page);
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const csp: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) csp.push(m.text());
  });
  await page.goto("/check");
  await page.keyboard.press("Tab"); // skip link
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  await expect(page.locator("#check-q")).toBeFocused();
  await page.keyboard.type("mallory.example");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/check\?q=mallory\.example$/);
  await expect(page.locator('meta[name="robots"]')).toHaveAttribute("content", /noindex/);
  const report = page.getByTestId("check-report");
  await expect(report).toHaveAttribute("data-ok", "false");
  await expect(report.getByRole("heading", { level: 2 })).toHaveText(/^\d+ errors to fix$/);
  const blog = page.getByTestId("check-document").filter({ hasText: "https://blog.alice.example/ident-property.json" });
  await expect(blog.getByTestId("finding")).toHaveAttribute("data-code", "not_listed");
  await expect(blog.locator("pre")).toContainText('"network_id": "§:entity:mallory.example"');
  // Copy by keyboard: focus the button, press Enter, and the clipboard holds the snippet.
  const copy = blog.getByTestId("copy");
  await copy.focus();
  await page.keyboard.press("Enter");
  await expect(blog.getByRole("status")).toHaveText("Copied");
  expect(JSON.parse(await page.evaluate(() => navigator.clipboard.readText()))).toEqual({ network_id: "§:entity:mallory.example" });
  expect(csp).toEqual([]);
  // The owner of the other site gets a draft with the snippet in it.
  const mail = await blog.getByRole("link", { name: /Draft an e-mail to the owner of blog\.alice\.example/ }).getAttribute("href");
  expect(mail).toMatch(/^mailto:\?subject=/);
  expect(decodeURIComponent(mail!.split("body=")[1]!)).toContain('"network_id": "§:entity:mallory.example"');
  // The card and the JSON-LD as a lookup shows them.
  await expect(page.getByTestId("result")).toHaveAttribute("data-domain", "mallory.example");
  expect(JSON.parse((await page.getByTestId("check-jsonld").textContent()) ?? "")).toMatchObject({ "@type": "Person" });
  await page.screenshot({ path: "test-results/screens/check-1280.png", fullPage: true });
});

test("a bad query to the check is HTTP 400 with the form and the reason", async ({ request }) => {
  const r = await request.get(`/check?q=${encodeURIComponent("§:property:blog.alice.example")}`);
  expect(r.status()).toBe(400);
  expect(await r.text()).toContain("takes the domain of an entity");
});

test("cards link each reason to the catalogue, and an entity with an error to the check", async ({ page }) => {
  await page.goto("/search?q=mallory.example");
  await expect(page.locator('[data-testid="claim-pending"]')).toHaveCount(0);
  await expect(page.getByTestId("check-link")).toHaveAttribute("href", "/check?q=mallory.example");
  const link = page.locator('[data-reason="not_listed"]').first().getByRole("link", { name: "What “not_listed” means" });
  await link.click();
  await expect(page).toHaveURL(/\/reasons#claim-not_listed$/);
  await expect(page.locator("#claim-not_listed")).toContainText("ownership list does not name this entity");
  // An entity with nothing to fix has no such link.
  await page.goto("/entity/alice.example");
  await expect(page.getByTestId("recheck").first()).toBeVisible();
  await expect(page.getByTestId("check-link")).toHaveCount(0);
});

test.describe("re-check now, without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("the form POST re-fetches, comes back to the page (303) and says what changed; past the limit it says so", async ({ page }) => {
    await asNewClient(page);
    // A cold page streams, which needs script; once cached, the page arrives whole.
    await page.goto("/entity/carol.example");
    await page.goto("/entity/carol.example");
    await page.getByTestId("recheck").focus();
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/entity\/carol\.example\?rechecked=/);
    const notice = page.getByTestId("recheck-notice");
    await expect(notice).toHaveAttribute("data-outcome", "rechecked");
    await expect(notice).toContainText("Re-checked at");
    // The page's own lookup recorded carol a moment before: the re-check found nothing new, and says so.
    await expect(notice).toHaveAttribute("data-changes", "0");
    await expect(notice).toContainText("No verdict changed.");
    // Four more within the minute are granted (five, like ?refresh=1); the next is refused in words.
    for (let i = 0; i < 4; i++) {
      await page.getByTestId("recheck").click();
      await expect(page.getByTestId("recheck-notice")).toHaveAttribute("data-outcome", "rechecked");
    }
    await page.getByTestId("recheck").click();
    await expect(page).toHaveURL(/\?recheck=refreshes&retry=\d+$/);
    await expect(page.getByTestId("recheck-notice")).toContainText(
      /^Not re-checked\. You have asked for as many fresh checks as one client may in a minute\. This is the last check\. Try again in \d+ s\.$/,
    );
  });
});

test("a cross-site re-check is refused: Sec-Fetch-Site, then Origin", async ({ request }) => {
  const form = { form: { domain: "alice.example" }, maxRedirects: 0 };
  expect((await request.post("/recheck", { ...form, headers: { "sec-fetch-site": "cross-site" } })).status()).toBe(403);
  expect((await request.post("/recheck", { ...form, headers: { "sec-fetch-site": "same-site" } })).status()).toBe(403);
  expect((await request.post("/recheck", { ...form, headers: { origin: "https://evil.example" } })).status()).toBe(403);
  expect((await request.post("/recheck", { ...form, headers: { origin: "null" } })).status()).toBe(403);
  expect((await request.post("/recheck", { form: { domain: "not a domain" }, maxRedirects: 0 })).status()).toBe(400);
  const ok = await request.post("/recheck", { ...form, headers: { "sec-fetch-site": "same-origin", "x-forwarded-for": "198.51.100.200" } });
  expect(ok.status()).toBe(303);
  expect(ok.headers()["location"]).toMatch(/^\/entity\/alice\.example\?rechecked=/);
});

test("the schemas as served: draft 2020-12, $id under the public URL, 404 for any other name", async ({ request }) => {
  for (const kind of ["entity", "property", "credential"]) {
    const r = await request.get(`/schemas/${kind}.json`);
    expect(r.status()).toBe(200);
    expect(r.headers()["content-type"]).toContain("application/schema+json");
    expect(await r.json()).toMatchObject({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: `https://ident.example/schemas/${kind}.json`,
    });
  }
  expect((await request.get("/schemas/other.json")).status()).toBe(404);
});

for (const width of [375, 1280]) {
  test(`the check and reasons pages at ${width} px: axe clean, no horizontal overflow, screenshots`, async ({ page }) => {
    await asNewClient(page);
    await page.setViewportSize({ width, height: 900 });
    for (const [name, url] of [
      ["check", "/check?q=mallory.example"],
      ["check-form", "/check"],
      ["reasons", "/reasons"],
    ] as const) {
      await page.goto(url);
      await page.waitForLoadState("networkidle");
      const results = await new AxeBuilder({ page }).analyze();
      expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `test-results/screens/${name}-${width}.png`, fullPage: true });
    }
  });
}
