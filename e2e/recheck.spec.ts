/**
 * "Re-check now" after a publisher changed something (docs/publishing.md#re-check-now): the page
 * comes back listing each verdict the re-check changed, from the index. The sample network here is
 * this file's own, changed while it runs through its control host (docs/decisions.md#the-sample-network).
 */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { spawnSampleNetwork, type SpawnedNetwork } from "../test/network/spawn";
import { BLOG_DROPS_ALICE, changeSite } from "./helpers/sample-control";
import { ready, startServer } from "./helpers/server";

const PORT = 3106;
test.use({ baseURL: `http://localhost:${PORT}`, javaScriptEnabled: false });
test.describe.configure({ mode: "serial", timeout: 120_000 });

let net: SpawnedNetwork;
let server: ChildProcess;
test.beforeAll(async ({ request }) => {
  test.setTimeout(120_000);
  net = await spawnSampleNetwork();
  server = startServer([path.resolve("web/serve.js")], { PORT: String(PORT), IDENT_TRUSTED_HOPS: "1", ...net.env });
  await ready(request, PORT, server);
});
test.afterAll(async () => {
  server?.kill("SIGTERM");
  await net?.stop();
});

/** Presses "Re-check now" on the page by keyboard and waits for the page it comes back to. */
async function recheck(page: Page) {
  await page.getByTestId("recheck").first().focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/entity\/alice\.example\?rechecked=/);
  return page.getByTestId("recheck-notice");
}

test("a property document that stops naming its owner: the re-check lists the claim that turned, and the one that turned back", async ({
  page,
}) => {
  await page.setExtraHTTPHeaders({ "x-forwarded-for": "198.51.100.7" });
  // A cold page streams (without script it reloads by itself, tested below); once cached, the page arrives whole.
  await page.goto("/entity/alice.example");
  await page.goto("/entity/alice.example");
  const blog = page.getByTestId("claim").filter({ hasText: "Workshop Notes" });
  await expect(blog).toHaveAttribute("data-verified", "true");

  // The blog's owner drops Alice from its ownership list.
  expect(await changeSite(net, "blog.alice.example", BLOG_DROPS_ALICE)).toBe(204);
  let notice = await recheck(page);
  await expect(notice).toHaveAttribute("data-outcome", "rechecked");
  await expect(notice).toHaveAttribute("data-changes", "1");
  await expect(notice).toContainText("1 verdict changed:");
  await expect(notice.locator("li")).toHaveText(
    /^Property §:property:blog\.alice\.example not verified: the property does not name this entity as an owner$/,
  );
  await expect(blog).toHaveAttribute("data-verified", "false");
  await expect(blog).toHaveAttribute("data-reason", "not_listed");
  await page.screenshot({ path: "test-results/screens/recheck-changed-1280.png", fullPage: true });

  // Put back: the next re-check lists the claim verified again, and only that.
  expect(await changeSite(net, "blog.alice.example", null)).toBe(204);
  notice = await recheck(page);
  await expect(notice).toHaveAttribute("data-changes", "1");
  await expect(notice.locator("li")).toHaveText("Property §:property:blog.alice.example verified");
  await expect(blog).toHaveAttribute("data-verified", "true");
  // The timeline keeps both changes.
  await expect(page.getByTestId("timeline")).toContainText("blog.alice.example not verified");
});

test("without JavaScript, a page still being checked reloads by itself until it arrives whole", async ({ page }) => {
  await page.setExtraHTTPHeaders({ "x-forwarded-for": "198.51.100.9" });
  let loads = 0;
  page.on("load", () => loads++);
  // One issuer answers after 5 s: its card arrives late, in markup only a script would reveal.
  await page.goto("/entity/patient.test", { waitUntil: "commit" });
  const slow = page.locator('[data-testid="claim"][data-verified="true"]').filter({ hasText: "Slow member" });
  await expect(slow).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId("claim-pending")).toHaveCount(0);
  expect(loads).toBeGreaterThanOrEqual(2);
});

test.describe("with JavaScript", () => {
  test.use({ javaScriptEnabled: true });
  test("a streamed page is never reloaded: the refresh is for browsers without script only", async ({ page }) => {
    await page.setExtraHTTPHeaders({ "x-forwarded-for": "198.51.100.8" });
    let loads = 0;
    page.on("load", () => loads++);
    await page.goto("/entity/carol.example");
    await expect(page.getByTestId("result")).toBeVisible();
    await expect(page.getByText("Still checking.")).toBeHidden();
    // Longer than the refresh would wait.
    await page.waitForTimeout(4000);
    expect(loads).toBe(1);
  });
});
