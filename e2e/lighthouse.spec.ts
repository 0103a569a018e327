import { mkdirSync, writeFileSync } from "node:fs";
import { type APIRequestContext, expect, test } from "@playwright/test";
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";

/**
 * Lighthouse (the npm package, its default mobile settings with simulated throttling) in Debian's
 * Chromium, on five kinds of page: Performance ≥ 0.95, Accessibility, Best Practices and SEO 1.0
 * (SEO not for a page marked noindex, which it must then be). The scores are read from the report.
 * Performance follows the machine's load, so each page gets up to five runs and its best counts;
 * every report is kept in test-results/lighthouse.
 */
test.describe.configure({ mode: "serial" });

const PAGES = [
  { name: "home", path: "/" },
  { name: "person", path: "/entity/alice.example" },
  { name: "organization", path: "/entity/acme.example" },
  { name: "search", path: "/search?q=alice" },
  { name: "property", path: `/search?q=${encodeURIComponent("§:property:jointventure.example")}` },
];
const CATEGORIES = ["performance", "accessibility", "best-practices", "seo"];

let chrome: chromeLauncher.LaunchedChrome;
test.beforeAll(async () => {
  chrome = await chromeLauncher.launch({
    chromePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    chromeFlags: [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
});
test.afterAll(() => chrome?.kill());

async function audit(url: string) {
  const run = await lighthouse(url, { port: chrome.port, output: "json", logLevel: "error", onlyCategories: CATEGORIES });
  if (!run) throw new Error(`Lighthouse returned nothing for ${url}`);
  return run.lhr;
}

/**
 * A page's HTML on a connection of its own. Lighthouse runs in this worker and holds its event loop
 * for seconds at a time, so a kept-alive connection from before an audit can be one the server has
 * since closed (5 s of keep-alive, web/front.ts) without this side having read it yet; reused, it
 * fails with "socket hang up" (seen once in CI). `Connection: close` opens a new one each time.
 */
async function fetched(request: APIRequestContext, path: string) {
  return request.get(path, { headers: { connection: "close" } });
}

test("Lighthouse: five kinds of page score Performance ≥ 0.95 and 1.0 in Accessibility, Best Practices and SEO", async ({
  baseURL,
  request,
}) => {
  test.setTimeout(300_000);
  mkdirSync("test-results/lighthouse", { recursive: true });
  // The home page is audited as people see it, with a filled index: its counts, latest changes and
  // issuers (the page tests before this one and discovery have recorded the sample network).
  const home = await (await fetched(request, "/")).text();
  for (const part of ["counts", "latest-changes", "top-issuers"]) expect(home, part).toContain(`data-testid="${part}"`);
  expect(home).not.toContain('data-testid="overview-empty"');
  // A first run warms Chromium and the page; it does not count.
  await audit(`${baseURL}/`);
  for (const { name, path } of PAGES) {
    const url = `${baseURL}${path}`;
    // Looked up first, as a shared or crawled page would be: its documents are cached.
    expect((await fetched(request, path)).status()).toBe(200);
    let best: Awaited<ReturnType<typeof audit>> | null = null;
    // Up to 5 tries, the best kept: total blocking time on 2 cores swings a run from 0.93 to 0.99.
    for (let i = 0; i < 5 && (best?.categories["performance"]?.score ?? 0) < 0.95; i++) {
      const lhr = await audit(url);
      writeFileSync(`test-results/lighthouse/${name}-${i}.json`, JSON.stringify(lhr));
      if ((lhr.categories["performance"]?.score ?? 0) >= (best?.categories["performance"]?.score ?? -1)) best = lhr;
    }
    if (!best) throw new Error(`no report for ${name}`);
    const score = (c: string) => best?.categories[c]?.score ?? null;
    const failing = Object.values(best.audits)
      .filter((a) => a.score !== null && a.score < 1 && (a.scoreDisplayMode === "binary" || a.scoreDisplayMode === "numeric"))
      .map((a) => `${a.id} ${a.score}`);
    expect(score("performance"), `${name}: ${failing.join(", ")}`).toBeGreaterThanOrEqual(0.95);
    expect(score("accessibility"), `${name}: ${failing.join(", ")}`).toBe(1);
    // Unweighted, so not in the score: a link whose name does not hold the words it shows (WCAG 2.5.3).
    expect(best.audits["label-content-name-mismatch"]?.score ?? 1, name).toBe(1);
    expect(score("best-practices"), `${name}: ${failing.join(", ")}`).toBe(1);
    // A page kept out of the index scores 0 on "is crawlable": it must then carry noindex on purpose.
    const noindex = best.audits["is-crawlable"]?.score === 0;
    if (noindex) {
      const html = await (await fetched(request, path)).text();
      expect(html, name).toMatch(/<meta name="robots" content="noindex/);
      expect(["search", "property"]).toContain(name);
    } else expect(score("seo"), `${name}: ${failing.join(", ")}`).toBe(1);
  }
});
