import { expect, test } from "@playwright/test";
import { createElement, Suspense, type ReactElement } from "react";
import { renderToReadableStream } from "react-dom/server";
import { FAILED_PART_TEXT, FAILED_PARTS_SCRIPT } from "../web/failed-parts";

test("with a publisher that answers after 5 s, the entity and the other claims show before it finishes", async ({ page }) => {
  await page.addInitScript(() => {
    const w = window as unknown as { __cls: number };
    w.__cls = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as (PerformanceEntry & { value: number; hadRecentInput: boolean })[])
        if (!e.hadRecentInput) w.__cls += e.value;
    }).observe({ type: "layout-shift", buffered: true });
  });
  await page.goto("/search?q=patient.test", { waitUntil: "commit" });
  await expect(page.getByTestId("entity-header").getByRole("heading")).toHaveText("Pat Ient");
  await expect(page.locator('[data-testid="claim"][data-verified="true"]').filter({ hasText: "Pat's blog" })).toBeVisible();
  await expect(page.locator('[data-testid="claim"][data-verified="true"]').filter({ hasText: "Quick member" })).toBeVisible();
  // The slow issuer has not answered yet: its card is still the placeholder.
  await expect(page.getByTestId("claim-pending")).toHaveCount(1);
  await expect(page.getByTestId("claim-pending")).toContainText("@pat@slow-issuer.test");
  // Then it arrives in place.
  await expect(page.locator('[data-testid="claim"][data-verified="true"]').filter({ hasText: "Slow member" })).toBeVisible({
    timeout: 20_000,
  });
  await expect(page.getByTestId("claim-pending")).toHaveCount(0);
  // Cards streaming in barely move the page: cumulative layout shift under 0.1 ("good").
  const cls = await page.evaluate(() => (window as unknown as { __cls: number }).__cls);
  console.log(`streaming: cumulative layout shift ${cls.toFixed(4)}`);
  expect(cls).toBeLessThan(0.1);
});

test("while the entity document itself is on its way, a browser already has the page and a loading card", async ({ page }) => {
  // sluggish.test's entity document answers after 3 s, and no other test asks for it.
  await page.goto("/entity/sluggish.test", { waitUntil: "commit" });
  // Had the shell waited for the document, the loading card would never be seen.
  await expect(page.getByTestId("loading")).toBeVisible();
  await expect(page.getByTestId("entity-header")).toHaveCount(0);
  await expect(page.getByRole("search")).toBeVisible();
  await expect(page.getByTestId("entity-header").getByRole("heading")).toHaveText("Sal Luggish");
  await expect(page.getByTestId("loading")).toHaveCount(0);
});

test("read pages ship none of the framework's script, and still stream; the check keeps its own (web/script-free.ts)", async ({
  page,
  request,
}) => {
  for (const path of ["/", "/entity/alice.example", "/search?q=alice", "/search?q=alice.example", "/issuer/guild.example", "/reasons"]) {
    await page.goto(path);
    await expect(page.locator("main h1").first(), path).toBeVisible();
    expect(await page.locator('script[src^="/_next/"], link[rel="preload"][as="script"], link[rel="modulepreload"]').count(), path).toBe(0);
    expect(await page.evaluate(() => document.documentElement.outerHTML.includes("__next_f")), path).toBe(false);
    // Compressed all the same, as the client asked.
    const r = await request.get(path, { headers: { "accept-encoding": "gzip" } });
    expect(r.headers()["content-encoding"], path).toBe("gzip");
  }
  // The publisher's check has buttons that need the runtime: it keeps it.
  await page.goto("/check");
  expect(await page.locator('script[src^="/_next/"]').count()).toBeGreaterThan(0);
});

test("a streamed part that fails in render says so in place of its loading card, on a page without the runtime (web/failed-parts.ts)", async ({
  page,
}) => {
  // React's own streaming output for a part that throws after its data arrived, with the app's script first in the head.
  async function Broken(): Promise<ReactElement> {
    await new Promise((r) => setTimeout(r, 20));
    throw new Error("a fault after the await");
  }
  const html = async (runtime: boolean) => {
    const tree = createElement(
      "html",
      null,
      createElement(
        "head",
        null,
        createElement("script", { dangerouslySetInnerHTML: { __html: FAILED_PARTS_SCRIPT } }),
        runtime ? createElement("script", { src: "/_next/static/chunks/runtime.js", async: true }) : null,
      ),
      createElement(
        "body",
        null,
        createElement(
          "main",
          null,
          createElement(Suspense, { fallback: createElement("div", { "data-testid": "loading" }, "Looking up…") }, createElement(Broken)),
        ),
        createElement("footer", null, "after"),
      ),
    );
    // Read as it streams: the shell first, then the part's failure (`$RX`); or, when React knows of
    // the failure before the shell leaves, the part sent failed (`<!--$!-->`).
    const stream = await renderToReadableStream(tree, { onError: () => {} });
    if (whole) await stream.allReady;
    return new Response(stream).text();
  };
  let whole = false;
  for (const w of [false, true]) {
    whole = w;
    const text = await html(false);
    expect(text.includes("$RX("), `streamed: ${!w}`).toBe(!w);
    await page.setContent(text);
    await expect(page.getByTestId("part-failed")).toHaveText(FAILED_PART_TEXT);
    await expect(page.getByTestId("loading")).toHaveCount(0);
    await expect(page.locator("footer")).toHaveText("after");
    // With the runtime on the page, the part is its to render (app/error.tsx): left alone here.
    await page.setContent(await html(true));
    await expect(page.getByTestId("loading")).toHaveCount(1);
    await expect(page.getByTestId("part-failed")).toHaveCount(0);
  }
});
