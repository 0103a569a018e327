/**
 * The home page as a place to visit (docs/decisions.md#the-home-page), against a server and sample
 * network of this file's own, so its index holds only what this file puts in it: empty, it says so
 * and keeps the examples; filled, it shows the counts and the latest changes; a claim that breaks
 * (its publisher stops naming the entity) is at the top of the home page within the page's cache
 * life, first in /changes.xml and last in /api/changes.
 */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { parseFeed } from "@rowanmanning/feed-parser";
import { expect, test } from "@playwright/test";
import { spawnSampleNetwork, type SpawnedNetwork } from "../test/network/spawn";
import { BLOG_DROPS_ALICE, changeSite } from "./helpers/sample-control";
import { ready, startServer } from "./helpers/server";

const PORT = 3140;
const BASE = `http://localhost:${PORT}`;
test.use({ baseURL: BASE });
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

test("an empty index says so on the home page, and the examples stay", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("overview-empty")).toContainText("The index is empty so far");
  await expect(page.getByRole("link", { name: "alice.example" }).first()).toBeVisible();
});

test("filled: the counts, the latest changes linking to their entities, the issuers; the feed linked in the head and in words", async ({
  page,
  request,
}) => {
  expect((await request.get("/api/resolve?q=alice.example", { headers: { "x-forwarded-for": "198.51.100.40" } })).status()).toBe(200);
  await expect(async () => {
    await page.goto("/");
    await expect(page.getByTestId("counts")).toBeVisible({ timeout: 1000 });
  }).toPass({ timeout: 15_000 });
  await expect(page.locator('[data-count="entities"]')).toHaveText(/^[1-9]/);
  await expect(page.locator('[data-count="accepted"]')).toHaveText(/^[1-9]/);
  const latest = page.getByTestId("latest-change");
  await expect(latest.first()).toBeVisible();
  await expect(page.getByTestId("latest-changes").getByRole("link").first()).toHaveAttribute("href", /^\/entity\//);
  await expect(page.getByTestId("top-issuers").getByRole("link").first()).toHaveAttribute("href", /^\/issuer\//);
  await expect(page.locator('link[rel="alternate"][type="application/atom+xml"]')).toHaveAttribute("href", /\/changes\.xml$/);
  await expect(page.getByTestId("overview").getByRole("link", { name: "Atom feed" })).toHaveAttribute("href", "/changes.xml");
  // Follow (components/follow.tsx) names the same feed, with the hub and a webhook to make.
  await expect(page.getByTestId("follow").getByRole("link", { name: "Atom feed" })).toHaveAttribute("href", "/changes.xml");
  await expect(page.getByTestId("follow").getByLabel("Webhook")).toHaveValue(/"topic": "http:\/\/localhost:3140\/changes\.xml"/);
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => v.id)).toEqual([]);
  await page.screenshot({ path: "test-results/screens/home-filled.png", fullPage: true });
});

test("a claim that breaks is at the top of the home page within its cache life, first in /changes.xml and last in /api/changes", async ({
  page,
  request,
}) => {
  const client = { "x-forwarded-for": "198.51.100.41" };
  // The blog's owner drops Alice from its ownership list; Alice's entity is checked again.
  expect(await changeSite(net, "blog.alice.example", BLOG_DROPS_ALICE)).toBe(204);
  try {
    const checked = await request.get("/api/resolve?q=alice.example&refresh=1", { headers: client });
    expect(checked.status()).toBe(200);
    const blog = (await checked.json()).results[0].properties.find((c: { id: string }) => c.id === "§:property:blog.alice.example");
    expect(blog).toMatchObject({ verified: false, reason: "not_listed" });

    // The home page, within its cache life (5 s): the change at the top, in the cards' words.
    await expect(async () => {
      await page.goto("/");
      await expect(page.getByTestId("latest-change").first()).toContainText("blog.alice.example", { timeout: 500 });
    }).toPass({ timeout: 15_000 });
    const top = page.getByTestId("latest-change").first();
    await expect(top).toContainText("not verified");
    await expect(top.getByRole("link")).toHaveAttribute("href", "/entity/alice.example");

    // The Atom feed of every change: first entry.
    const feed = parseFeed(await (await request.get("/changes.xml", { headers: client })).text());
    expect(feed.items[0]?.title).toMatch(/Property Workshop Notes is no longer verified/);

    // The API, paged to its end: the last change.
    let after: string | null = null;
    let last: { domain: string; claim: string | null; verified: boolean | null } | undefined;
    for (let i = 0; i < 100; i++) {
      const answer = await request.get(`/api/changes?limit=50${after ? `&after=${after}` : ""}`, { headers: client });
      expect(answer.status()).toBe(200);
      const page_ = (await answer.json()) as {
        changes: { domain: string; claim: string | null; verified: boolean | null }[];
        next_cursor: string | null;
      };
      last = page_.changes.at(-1) ?? last;
      if (!page_.next_cursor) break;
      after = page_.next_cursor;
    }
    expect(last).toMatchObject({ domain: "alice.example", claim: "§:property:blog.alice.example", verified: false });
  } finally {
    await changeSite(net, "blog.alice.example", null);
  }
});
