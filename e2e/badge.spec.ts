/**
 * Entity badges (docs/api.md#badges) against the built app on the sample network: a looked-up
 * entity's badge says its counts, each state drawn by Chromium (screenshots in test-results/screens/),
 * and the entity page's Share section: the badge and its snippets, reached and selected by keyboard
 * with no script at all.
 */
import { DOMParser, onWarningStopParsing } from "@xmldom/xmldom";
import type { SearchResponse } from "ident-resolver";
import { expect, test } from "./helpers/test";

/** IDENT_PUBLIC_URL in playwright.config.ts. */
const PUBLIC = "https://ident.example";
const SVG_NS = "http://www.w3.org/2000/svg";

/** The texts a person sees on a badge (not its shadows), and its accessible name, as an XML parser reads them. */
function readBadge(svg: string) {
  const doc = new DOMParser({ onError: onWarningStopParsing }).parseFromString(svg, "image/svg+xml");
  const texts = Array.from(doc.getElementsByTagNameNS(SVG_NS, "text"));
  const shown = texts
    .filter((t) => (t.parentNode as unknown as { getAttribute(n: string): string | null }).getAttribute("aria-hidden") !== "true")
    .map((t) => t.textContent);
  return { shown, title: doc.getElementsByTagNameNS(SVG_NS, "title")[0]?.textContent, role: doc.documentElement?.getAttribute("role") };
}

/** "N of M verified" of a lookup's answer: its claims of every kind. */
function countsOf(response: SearchResponse): { verified: number; total: number } {
  const result = response.results[0]!;
  const all = [...result.properties, ...result.credentials, ...result.connections];
  return { verified: all.filter((c) => c.verified).length, total: all.length };
}

test("a looked-up entity's badge says how many of its claims verified, as its lookup did", async ({ request }) => {
  const lookup = await request.get("/api/resolve?q=alice.example");
  expect(lookup.status()).toBe(200);
  const { verified, total } = countsOf((await lookup.json()) as SearchResponse);
  expect(total).toBeGreaterThan(0);
  const answer = await request.get("/entity/alice.example/badge.svg");
  expect(answer.status()).toBe(200);
  expect(answer.headers()["content-type"]).toMatch(/^image\/svg\+xml/);
  expect(answer.headers()["access-control-allow-origin"]).toBe("*");
  expect(answer.headers()["cache-control"]).toBe("public, max-age=300");
  const badge = readBadge(await answer.text());
  expect(badge.shown).toEqual(["ident", `${verified} of ${total} verified`]);
  expect(badge.role).toBe("img");
  expect(badge.title).toBe(`ident: alice.example has ${verified} of ${total} claims verified`);
  // Its ETag answers 304; HEAD has no body.
  const etag = answer.headers()["etag"]!;
  expect((await request.get("/entity/alice.example/badge.svg", { headers: { "if-none-match": etag } })).status()).toBe(304);
  const head = await request.head("/entity/alice.example/badge.svg");
  expect(head.status()).toBe(200);
  expect((await head.body()).length).toBe(0);
  // Never seen: the unknown badge, not a 404; no domain: 404.
  const unknown = await request.get("/entity/never-looked-up.example/badge.svg");
  expect(unknown.status()).toBe(200);
  expect(readBadge(await unknown.text()).shown).toEqual(["ident", "unknown"]);
  expect((await request.get("/entity/not%20a%20domain/badge.svg")).status()).toBe(404);
});

/** A domain of the sample network for each state, and what its badge says. */
const STATES = [
  ["all-verified", "alice.example", /^\d+ of \d+ verified$/],
  ["some-verified", "hostile.test", /^\d+ of \d+ verified$/],
  ["none-verified", "mallory.example", /^0 of \d+ verified$/],
  ["no-claims", "minimal.test", /^no claims$/],
  ["not-verified", "not-json.test", /^not verified$/],
  ["unknown", "never-looked-up.example", /^unknown$/],
] as const;

test.describe("each state, drawn", () => {
  // Four device pixels a pixel: a 20-pixel badge is read in its screenshot.
  test.use({ deviceScaleFactor: 4, viewport: { width: 400, height: 60 } });

  test("each state as Chromium draws the badge opened on its own (screenshots)", async ({ page, request }) => {
    for (const [state, domain, says] of STATES) {
      if (state !== "unknown") expect((await request.get(`/api/resolve?q=${domain}`)).status(), domain).toBe(200);
      // Opened on its own, the badge is a document under its own strict policy: nothing in it is refused.
      const refused: string[] = [];
      const listen = (m: { text(): string }) => void (/Content Security Policy|Refused to/i.test(m.text()) && refused.push(m.text()));
      page.on("console", listen);
      const answer = await page.goto(`/entity/${domain}/badge.svg`);
      expect(answer?.status(), domain).toBe(200);
      const svg = page.locator("svg");
      await expect(svg).toHaveAttribute("role", "img");
      const shown = readBadge(await answer!.text()).shown[1] ?? "";
      expect(shown, domain).toMatch(says);
      if (state === "all-verified") expect(shown.split(" of ")[0]).toBe(shown.split(" of ")[1]?.split(" ")[0]);
      if (state === "some-verified") expect(shown.split(" of ")[0]).not.toBe(shown.split(" of ")[1]?.split(" ")[0]);
      // Drawn: as wide as its text says, and not blank.
      const box = await svg.boundingBox();
      expect(box?.width, domain).toBeGreaterThan(60);
      expect(box?.height, domain).toBe(20);
      await svg.screenshot({ path: `test-results/screens/badge-${state}.png`, scale: "device" });
      page.off("console", listen);
      expect(refused, domain).toEqual([]);
    }
  });
});

test.describe("the entity page's Share section, with no script at all", () => {
  test.use({ javaScriptEnabled: false });

  test("shows the badge and its Markdown and HTML, each reached with Tab and selected whole", async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto("/entity/alice.example");
    const share = page.getByTestId("share");
    await expect(share.getByRole("heading", { level: 2, name: "Share" })).toBeVisible();
    // The badge, loaded and drawn, named for what it says.
    const img = share.getByTestId("share-badge");
    await expect(img).toHaveAttribute("alt", /^ident: alice\.example has \d+ of \d+ claims verified$/);
    await expect(img).toHaveAttribute("src", /^\/entity\/alice\.example\/badge\.svg\?v=[\w-]{27}$/);
    await expect.poll(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth)).toBeGreaterThan(60);
    const markdown = `[![ident status of alice.example](${PUBLIC}/entity/alice.example/badge.svg)](${PUBLIC}/entity/alice.example)`;
    const html = `<a href="${PUBLIC}/entity/alice.example"><img src="${PUBLIC}/entity/alice.example/badge.svg" alt="ident status of alice.example"></a>`;
    await expect(share.getByLabel("Markdown")).toHaveValue(markdown);
    await expect(share.getByLabel("HTML")).toHaveValue(html);
    // By keyboard from the top of the page: Tab until the Markdown field, select it all, then the HTML.
    await page.locator("body").focus();
    let tabs = 0;
    while (!(await page.evaluate(() => document.activeElement?.id === "share-markdown"))) {
      expect(++tabs, "Tab never reached the Markdown field").toBeLessThan(80);
      await page.keyboard.press("Tab");
    }
    const selected = () =>
      page.evaluate(() => {
        const field = document.activeElement as HTMLTextAreaElement;
        return field.value.slice(field.selectionStart, field.selectionEnd);
      });
    await page.keyboard.press("ControlOrMeta+A");
    expect(await selected()).toBe(markdown);
    await page.keyboard.press("Tab");
    await expect(share.getByLabel("HTML")).toBeFocused();
    await page.keyboard.press("ControlOrMeta+A");
    expect(await selected()).toBe(html);
    await share.screenshot({ path: "test-results/screens/share-1280.png" });
    await page.emulateMedia({ colorScheme: "dark" });
    await share.screenshot({ path: "test-results/screens/share-dark-1280.png" });
  });
});
