/** The index through the API (docs/decisions.md#the-index): `since` on every claim, and the history of changes. */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "./helpers/test";
import { SearchResponse } from "ident-resolver";

test("a lookup is recorded: the API carries last_checked_at and each claim's since; the history lists the first verdicts", async ({
  request,
}) => {
  const r = SearchResponse.parse(await (await request.get("/api/resolve?q=acme.example")).json()).results[0]!;
  const checked = r.entity.last_checked_at!;
  expect(checked).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  for (const claim of [...r.properties, ...r.credentials, ...r.connections]) {
    expect(claim.since?.first_seen_at).toBeDefined();
    expect(claim.since?.last_checked_at).toBe(checked);
    expect(claim.verified ? claim.since?.verified_since : claim.since?.failing_since).toBeDefined();
  }
  // Asked again, the answer comes from the cache (the admission's), annotated all the same: the same
  // runs, checked then or later (documents here go stale after 3 s and are refreshed).
  const again = SearchResponse.parse(await (await request.get("/api/resolve?q=acme.example")).json()).results[0]!;
  expect(again.entity.last_checked_at! >= checked).toBe(true);
  expect(again.properties.map((c) => c.since?.first_seen_at)).toEqual(r.properties.map((c) => c.since?.first_seen_at));
  const history = await request.get("/api/entity/acme.example/history");
  expect(history.status()).toBe(200);
  expect(history.headers()["cache-control"]).toBe("public, max-age=60");
  const body = (await history.json()) as { schema: string; domain: string; changes: { kind: string; status?: string }[] };
  expect(body.schema).toBe("ident-resolver/history@1");
  expect(body.domain).toBe("acme.example");
  expect(body.changes.at(-1)).toMatchObject({ kind: "entity", status: "accepted" });
  expect(body.changes.length).toBe(1 + r.properties.length + r.credentials.length + r.connections.length);
});

test("the history of a domain the index has not seen is 404, of a non-domain 400, both in JSON", async ({ request }) => {
  const unknown = await request.get("/api/entity/never-looked-up.example/history");
  expect(unknown.status()).toBe(404);
  expect(await unknown.json()).toMatchObject({ error: { code: "not_found" } });
  const bad = await request.get("/api/entity/%FF/history");
  expect(bad.status()).toBe(400);
  expect(await bad.json()).toMatchObject({ error: { code: "invalid_query" } });
});

test.describe("search of the index (docs/decisions.md#search)", () => {
  test.beforeAll(async ({ request }) => {
    // What a search can find: what was looked up (discovery may have found them already).
    for (const q of ["guild.example", "alice.example", "bob.example", "chamber.example", "acme.example"]) {
      expect((await request.get(`/api/resolve?q=${q}`)).status()).toBe(200);
    }
  });

  test("a name search by keyboard from the home page: ranked hits with the words marked, then the entity page", async ({ page }) => {
    await page.goto("/");
    const box = page.getByRole("searchbox", { name: "Look up an identity" });
    for (let i = 0; i < 10 && !(await box.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press("Tab");
    await expect(box).toBeFocused();
    await page.keyboard.type("acme too");
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/search\?q=acme\+too$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(/^Entities matching\W*acme too\W*$/);
    const first = page.getByTestId("hit").first();
    await expect(first).toHaveAttribute("data-domain", "acme.example");
    await expect(first.locator(".hit-name mark")).toHaveText(["Acme", "Tools"]);
    await expect(first).toContainText(/\d+ verified · \d+ not verified · last checked \d\d:\d\d UTC/);
    // Tab from the search box to the first hit's link, then open it.
    await page.getByRole("searchbox").focus();
    const link = first.getByRole("link");
    for (let i = 0; i < 5 && !(await link.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press("Tab");
    await expect(link).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/entity\/acme\.example$/);
  });

  test("a search with no hits suggests a lookup, and is HTTP 200; bad text is 400 with the reason", async ({ page }) => {
    const none = await page.goto("/search?q=no+such+thing+anywhere");
    expect(none?.status()).toBe(200);
    await expect(page.getByTestId("no-hits")).toContainText("look it up instead");
    const bad = await page.goto(`/search?q=${"x".repeat(201)}`);
    expect(bad?.status()).toBe(400);
    await expect(page.getByRole("alert").filter({ hasText: "longer" })).toContainText("longer than 200 characters");
  });

  test("the API: ranked hits with a cursor; 400 for empty, long or control text and a bad cursor; hostile text is no error", async ({
    request,
  }) => {
    const ok = await request.get("/api/search?q=alise%20moreau");
    expect(ok.status()).toBe(200);
    const body = (await ok.json()) as { schema: string; results: { domain: string; url: string }[]; next_cursor: string | null };
    expect(body.schema).toBe("ident-resolver/index-search@1");
    expect(body.results[0]).toMatchObject({ domain: "alice.example", url: "/entity/alice.example" });
    // A member of the guild is found by the name she gives its site.
    const member = (await (await request.get("/api/search?q=makers%20guild")).json()) as typeof body;
    expect(member.results.map((h) => h.domain)).toContain("alice.example");
    for (const q of ["", "%20", "x".repeat(201), "a%00b", "a%0Ab"]) {
      const r = await request.get(`/api/search?q=${q}`);
      expect(r.status(), q).toBe(400);
      expect(await r.json()).toMatchObject({ error: { code: "invalid_query" } });
    }
    expect((await request.get("/api/search?q=guild&cursor=bogus")).status()).toBe(400);
    for (const q of ["'; DROP TABLE entities; --", "%25", "_", "\\", "a:* | !b", "😀".repeat(200), '"', "<script>"]) {
      const r = await request.get(`/api/search?q=${encodeURIComponent(q)}`);
      expect(r.status(), q).toBe(200);
    }
  });

  test("an issuer's page lists the credentials the index knows, with each holder and its verdict", async ({ page, request }) => {
    await page.goto("/issuer/guild.example");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Credentials issued by guild.example");
    const rows = page.getByTestId("issued-credential");
    await expect(rows.filter({ hasText: "@alice@guild.example/members" })).toHaveAttribute("data-verified", "true");
    await expect(rows.filter({ hasText: "Bob Tanaka" })).toHaveAttribute("data-verified", "true");
    expect((await page.goto("/issuer/not_a_domain"))?.status()).toBe(404);
    // The first page is kept whole while the credentials it lists stand (docs/decisions.md#page-cache); a later one never.
    const first = [await request.get("/issuer/guild.example"), await request.get("/issuer/guild.example")];
    expect(first.map((r) => r.headers()["x-ident-page-cache"])).toEqual([expect.stringMatching(/^(hit|miss)$/), "hit"]);
    expect(await first[1]!.text()).toContain("@alice@guild.example/members");
    const later = `/issuer/guild.example?after=${Buffer.from(JSON.stringify([1, "alice.example", "k"])).toString("base64url")}`;
    for (let i = 0; i < 2; i++) expect((await request.get(later)).headers()["x-ident-page-cache"]).not.toBe("hit");
    // A page link that is not one: 400, said in words, with the way back to the first page.
    expect((await page.goto("/issuer/guild.example?after=bogus"))?.status()).toBe(400);
    await expect(page.getByTestId("bad-page-link")).toContainText("This page link is not valid");
    await page.getByRole("link", { name: "Go to the first page" }).click();
    await expect(page).toHaveURL(/\/issuer\/guild\.example$/);
    await expect(page.getByTestId("issued-credential").first()).toBeVisible();
    // A well-formed link past the last credential: no more, not an error.
    const past = Buffer.from(JSON.stringify([0, "zzz.example", "k"])).toString("base64url");
    expect((await page.goto(`/issuer/guild.example?after=${past}`))?.status()).toBe(200);
    await expect(page.getByTestId("no-credentials")).toContainText("No more credentials");
  });

  test("a card says since when each verdict holds, and the entity page shows its history", async ({ page }) => {
    await page.goto("/entity/alice.example");
    const since = page.getByTestId("claim-since");
    await expect(since.first()).toHaveText(/^(Verified since|Failing since) (\d\d:\d\d UTC|yesterday|\d+ \w+ \d{4})/);
    const timeline = page.getByTestId("timeline");
    await expect(timeline.getByRole("heading", { name: "History" })).toBeVisible();
    await expect(timeline.locator("li").last()).toContainText(/Entity document accepted|verified/);
    await expect(timeline.getByRole("link", { name: "/api/entity/alice.example/history" })).toBeVisible();
  });
});

test("the demo's seeds: a few seconds after start, a name search finds the sample network without a lookup", async ({ request }) => {
  test.setTimeout(120_000);
  // The shared server runs without discovery (its tests want cold caches): this one is the demo's own.
  const PORT = 3104;
  const dir = mkdtempSync(path.join(tmpdir(), "ident-demo-"));
  const demo = spawn(process.execPath, [path.resolve("scripts/demo.js"), "--quiet"], {
    env: { ...process.env, PORT: String(PORT), IDENT_DATA_DIR: path.join(dir, "data"), IDENT_CRAWL: "1" },
    stdio: "ignore",
  });
  try {
    const names = async () => {
      const r = await request.get(`http://localhost:${PORT}/api/search?q=example`).catch(() => null);
      const body = r?.ok() ? ((await r.json()) as { results: { name?: string; status: string }[] }) : { results: [] };
      return body.results.filter((h) => h.status === "accepted").map((h) => h.name);
    };
    await expect
      .poll(names, { timeout: 90_000, intervals: [500] })
      .toEqual(
        expect.arrayContaining([
          "Alice Moreau",
          "Acme Tools",
          "Beta Woods",
          "Gamma Sawmill",
          "Bob Tanaka",
          "Carol Nguyen",
          "Hartley & Osei",
        ]),
      );
    const guild = (await (await request.get(`http://localhost:${PORT}/api/search?q=makers%20guild`)).json()) as {
      results: { domain: string }[];
    };
    expect(guild.results.map((h) => h.domain)).toContain("alice.example");
  } finally {
    demo.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a cold page streamed to a browser says since when on every card as it arrives", async ({ page }) => {
  // erin.test is asked for by no other test on this server: the page streams.
  await page.goto("/entity/erin.test");
  await expect(page.getByTestId("claim-pending")).toHaveCount(0);
  const cards = page.getByTestId("claim");
  expect(await cards.count()).toBeGreaterThan(0);
  await expect(page.getByTestId("claim-since")).toHaveCount(await cards.count());
  await expect(page.getByTestId("claim-since").first()).toHaveText(/^(Verified|Failing) since \d\d:\d\d UTC/);
});
