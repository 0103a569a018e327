/**
 * The limits of docs/decisions.md#outbound-work, as a client would meet them, on servers of this
 * file's own (the shared test server sets them out of reach): the cold-lookup limit per client, the
 * per-host budget for all clients, and the outbound cap against a tarpit. Refusals are 429 or 503
 * with Retry-After from the API, and a page that says why in words; never a 500, and `/` still answers.
 */
import type { ChildProcess } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";
import path from "node:path";
import { expect, test } from "./helpers/test";
import { ready, startServer as start } from "./helpers/server";

test.describe.configure({ mode: "serial", timeout: 120_000 });

const LIMITED = 3102;
const TARPITTED = 3103;
const as = (client: string) => ({ "x-forwarded-for": client });

test.describe("cold lookups per client and the budget of one host (the sample network)", () => {
  let server: ChildProcess;
  test.beforeAll(async ({ request }) => {
    test.setTimeout(120_000);
    // One proxy in front is trusted, so each test names its client in X-Forwarded-For.
    server = start([path.resolve("scripts/demo.js"), "--quiet"], {
      PORT: String(LIMITED),
      IDENT_TRUSTED_HOPS: "1",
      IDENT_COLD_LOOKUPS_PER_MIN: "3",
      IDENT_HOST_BUDGET_PER_MIN: "6",
    });
    await ready(request, LIMITED, server);
  });
  test.afterAll(() => {
    server.kill("SIGTERM");
  });

  test("IDENT_COLD_LOOKUPS_PER_MIN: the fourth cold lookup of a client is 429 with Retry-After; cached answers and other clients go on", async ({
    request,
  }) => {
    const api = (q: string, client: string) => request.get(`http://localhost:${LIMITED}/api/resolve?q=${q}`, { headers: as(client) });
    for (const q of ["minimal.test", "bob.example", "carol.example"]) expect((await api(q, "198.51.100.1")).status()).toBe(200);
    const refused = await api("dana.test", "198.51.100.1");
    expect(refused.status()).toBe(429);
    expect(Number(refused.headers()["retry-after"])).toBeGreaterThan(0);
    expect(refused.headers()["cache-control"]).toBe("no-store");
    const body = await refused.json();
    expect(body.error).toMatchObject({
      code: "rate_limited",
      refused: "cold_lookups",
      retry_after_s: Number(refused.headers()["retry-after"]),
    });
    expect(body.error.message).toMatch(/^You have started the 3 lookups a minute that fetch from publishers one client may/);
    // docs/api.md#limits: the 429 says which quota is spent, and when room comes back, as its Retry-After does.
    expect(refused.headers()["ratelimit-policy"]).toMatch(/^"cold";q=3;w=60, "search";q=\d+;w=60, "reads";q=\d+;w=60$/);
    const cold = /^"cold";r=(\d+);t=(\d+)/.exec(refused.headers().ratelimit ?? "");
    expect(cold?.[1]).toBe("0");
    expect(Number(cold?.[2])).toBeGreaterThan(0);
    expect(Number(cold?.[2])).toBeLessThanOrEqual(Number(refused.headers()["retry-after"]));
    expect(refused.headers()["access-control-allow-origin"]).toBe("*");
    // A lookup the cache answers starts no fetch, so it is not counted.
    expect((await api("minimal.test", "198.51.100.1")).status()).toBe(200);
    expect((await api("dana.test", "198.51.100.2")).status()).toBe(200);
  });

  test("the refused page says why in words, with its status, and a keyboard reaches the search box", async ({ page }) => {
    await page.setExtraHTTPHeaders(as("198.51.100.1"));
    const response = await page.goto(`http://localhost:${LIMITED}/entity/erin.test`);
    expect(response?.status()).toBe(429);
    expect(response?.headers()["retry-after"]).toMatch(/^\d+$/);
    const notice = page.getByTestId("refusal");
    await expect(notice.getByRole("heading", { name: "Too many lookups for now" })).toBeVisible();
    await expect(notice).toContainText("Nothing was checked, so nothing here says anything about the publisher.");
    await page.screenshot({ path: "test-results/screens/refused-429.png", fullPage: true });
    const search = page.getByRole("searchbox");
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press("Tab");
      if (await search.evaluate((el) => el === document.activeElement)) break;
    }
    await expect(search).toBeFocused();
    // The same client still gets what is cached.
    expect((await page.goto(`http://localhost:${LIMITED}/entity/minimal.test`))?.status()).toBe(200);
  });

  test("IDENT_HOST_BUDGET_PER_MIN: one host gets at most its budget a minute, whichever clients ask; the page says so in words", async ({
    request,
    page,
  }) => {
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) {
      // Each client refreshes once: every lookup fetches acme.example's entity document again.
      const r = await request.get(`http://localhost:${LIMITED}/api/resolve?q=gamma.example&refresh=1`, { headers: as(`203.0.113.${i}`) });
      statuses.push(r.status());
      if (r.status() === 429) {
        expect(r.headers()["retry-after"]).toMatch(/^\d+$/);
        expect((await r.json()).error).toMatchObject({
          refused: "host_budget",
          message: expect.stringMatching(/gamma\.example has had the 6 requests a minute/),
        });
      }
    }
    expect(statuses.slice(0, 6)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(statuses.slice(6)).toEqual([429, 429, 429]);
    await page.setExtraHTTPHeaders(as("203.0.113.99"));
    const response = await page.goto(`http://localhost:${LIMITED}/entity/gamma.example?refresh=1`);
    expect(response?.status()).toBe(429);
    expect(response?.headers()["retry-after"]).toMatch(/^\d+$/);
    const notice = page.getByTestId("refusal");
    await expect(notice.getByRole("heading", { name: "This site has had enough requests for now" })).toBeVisible();
    await expect(notice).toContainText("gamma.example has had the 6 requests a minute this resolver sends one site");
  });
});

test.describe("the outbound cap against a tarpit", () => {
  let server: ChildProcess;
  let tarpit: Server;
  const held = new Set<Socket>();
  test.beforeAll(async ({ request }) => {
    test.setTimeout(120_000);
    // Accepts every connection and never answers: each fetch holds its slot until its deadline.
    tarpit = createServer((socket) => {
      held.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => held.delete(socket));
    });
    await new Promise<void>((resolve) => tarpit.listen(0, "127.0.0.1", resolve));
    const address = tarpit.address();
    const port = typeof address === "object" && address ? address.port : 0;
    server = start([path.resolve("web/serve.js")], {
      PORT: String(TARPITTED),
      IDENT_METRICS_ADDR: `127.0.0.1:${TARPITTED + 6000}`,
      IDENT_CONNECT_TO: `::127.0.0.1:${port}`,
      IDENT_FETCH_TIMEOUT_MS: "2000",
      IDENT_MAX_OUTBOUND: "2",
      IDENT_TRUSTED_HOPS: "1",
    });
    await ready(request, TARPITTED, server);
  });
  test.afterAll(async () => {
    server.kill("SIGTERM");
    for (const s of held) s.destroy();
    await new Promise((r) => tarpit.close(r));
  });

  test("IDENT_MAX_OUTBOUND: past the queue, 503 with Retry-After; never a 500, never more sockets than the cap, and / still answers", async ({
    request,
  }) => {
    const lookups = Array.from({ length: 16 }, (_, i) =>
      request.get(`http://localhost:${TARPITTED}/api/resolve?q=tarpit${i}.test`, { headers: as(`192.0.2.${i}`), timeout: 30_000 }),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(held.size).toBeLessThanOrEqual(2);
    const home = await request.get(`http://localhost:${TARPITTED}/`);
    expect(home.status()).toBe(200);
    const answers = await Promise.all(lookups);
    const statuses = answers.map((a) => a.status());
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(6);
    for (const a of answers.filter((x) => x.status() === 503)) {
      expect(a.headers()["retry-after"]).toBe("2");
      expect((await a.json()).error).toMatchObject({ code: "busy", refused: "busy" });
    }
    // Those that got a slot reached the tarpit and timed out: the publisher's outcome, reported as such.
    const done = await answers.find((a) => a.status() === 200)?.json();
    expect(done?.results[0].entity.status).toBe("timeout");
    // The app's own count, reported by its fetch thread every 200 ms: the cap held from the first connection attempt on.
    const peak = async () => {
      const text = await (await request.get(`http://127.0.0.1:${TARPITTED + 6000}/metrics`)).text();
      return Number(/^ident_outbound_sockets_peak (\S+)$/m.exec(text)?.[1]);
    };
    await expect.poll(peak).toBe(2);
  });

  test("one client's lookups past 8 at once are refused with 429, a second later, before they reach Next", async ({ request }) => {
    const t0 = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request.get(`http://localhost:${TARPITTED}/api/resolve?q=mine${i}.test`, { headers: as("192.0.2.77"), timeout: 30_000 }),
      ),
    );
    const refused = answers.filter((a) => a.status() === 429);
    expect(refused).toHaveLength(2);
    for (const a of refused) {
      expect(a.headers()["retry-after"]).toBe("1");
      expect((await a.json()).error).toMatchObject({
        refused: "lookups_in_progress",
        message: expect.stringMatching(/8 lookups in progress/),
      });
    }
    expect(answers.filter((a) => a.status() === 200 || a.status() === 503)).toHaveLength(8);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
  });

  test("a busy page says so in words, with 503", async ({ page, request }) => {
    const filling = Array.from({ length: 12 }, (_, i) =>
      request.get(`http://localhost:${TARPITTED}/api/resolve?q=filler${i}.test`, { headers: as(`192.0.2.${100 + i}`), timeout: 30_000 }),
    );
    await new Promise((r) => setTimeout(r, 300));
    await page.setExtraHTTPHeaders(as("192.0.2.200"));
    const response = await page.goto(`http://localhost:${TARPITTED}/entity/one-more.test`);
    expect(response?.status()).toBe(503);
    // Refused by the server in front of Next (web/serve.js) or by the page itself, in the same words.
    await expect(page.getByRole("heading", { name: "This resolver is busy" })).toBeVisible();
    await page.screenshot({ path: "test-results/screens/refused-503.png", fullPage: true });
    await Promise.all(filling);
  });
});
