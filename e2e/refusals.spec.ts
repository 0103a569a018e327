/**
 * The refusals of the traffic room as a client meets them (docs/architecture.md#traffic), one shape
 * each, on servers of this file's own: the API's JSON (status, Retry-After, `error.refused`), the page's
 * words and status. Every sample publisher sits on ONE loopback address here, as sites on one CDN or
 * Pages host do, so an address's minute and each client's share of it can be spent; a server of its
 * own is left without file descriptors (prlimit) for this machine's own fault. The other refusals are met in e2e/limits.spec.ts (cold lookups, a host's minute, the outbound cap, lookups in
 * progress) and e2e/publisher.spec.ts (re-checks).
 */
import { execFileSync, type ChildProcess } from "node:child_process";
import { readdirSync } from "node:fs";
import { Agent, get as httpGet, type IncomingHttpHeaders } from "node:http";
import path from "node:path";
import { expect, test } from "./helpers/test";
import { spawnSampleNetwork, type SpawnedNetwork } from "../test/network/spawn";
import { ready, startServer } from "./helpers/server";

test.describe.configure({ mode: "serial", timeout: 120_000 });

const ONE_ADDRESS = 3109;
const SMALL_QUERIES = 3110;
const as = (client: string) => ({ "x-forwarded-for": client });

let net: SpawnedNetwork;
const servers: ChildProcess[] = [];
test.beforeAll(async ({ request }) => {
  test.setTimeout(120_000);
  net = await spawnSampleNetwork();
  // Every name to the sample network's one address: 12 requests a minute to it, 3 (a quarter) per client.
  const oneAddress = startServer([path.resolve("web/serve.js")], {
    PORT: String(ONE_ADDRESS),
    IDENT_TRUSTED_HOPS: "1",
    ...net.env,
    IDENT_CONNECT_TO: net.connectToOne,
    IDENT_ADDRESS_BUDGET_PER_MIN: "12",
  });
  // Each publisher on its own address, and 10 fetches a query.
  const smallQueries = startServer([path.resolve("web/serve.js")], {
    PORT: String(SMALL_QUERIES),
    IDENT_TRUSTED_HOPS: "1",
    ...net.env,
    IDENT_MAX_FETCHES_PER_QUERY: "10",
  });
  servers.push(oneAddress, smallQueries);
  await Promise.all([ready(request, ONE_ADDRESS, oneAddress), ready(request, SMALL_QUERIES, smallQueries)]);
});
test.afterAll(async () => {
  for (const s of servers) s.kill("SIGTERM");
  await net?.stop();
});

test("client_share, one client's share: past a quarter of the address's minute, 429 with Retry-After and the limit named; another client goes on; the page says why", async ({
  page,
  request,
}) => {
  const api = (q: string, client: string) => request.get(`http://localhost:${ONE_ADDRESS}/api/resolve?q=${q}`, { headers: as(client) });
  // Each lookup of a name the network does not serve spends at least one request to the address.
  const statuses: number[] = [];
  let refused = null;
  for (let i = 0; i < 4 && !refused; i++) {
    const r = await api(`nowhere${i}.test`, "198.51.100.1");
    statuses.push(r.status());
    if (r.status() === 429) refused = r;
  }
  expect(statuses.slice(0, 2)).toEqual([200, 200]);
  if (!refused) throw new Error(`no refusal in ${statuses.join(", ")}`);
  expect(Number(refused.headers()["retry-after"])).toBeGreaterThan(0);
  expect(refused.headers()["cache-control"]).toBe("no-store");
  const body = await refused.json();
  expect(body.error).toMatchObject({ code: "rate_limited", refused: "client_share", retry_after_s: expect.any(Number) });
  expect(body.error.message).toMatch(
    /^Your lookups have had their share \(3 a minute\) of the requests this resolver sends the server of nowhere\d\.test/,
  );
  // Another client goes on: at most once the address's 10 s (a quarter of its minute, which the first
  // client's share filled) have passed.
  let other = await api("minimal.test", "198.51.100.2");
  if (other.status() === 429) {
    expect((await other.json()).error.message).toMatch(/has had 3 requests in 10 s from this resolver/);
    await new Promise((r) => setTimeout(r, Number(other.headers()["retry-after"]) * 1000));
    other = await api("minimal.test", "198.51.100.2");
  }
  expect(other.status()).toBe(200);
  // The same client's page: the refusal in words, where the results would be.
  await page.setExtraHTTPHeaders(as("198.51.100.1"));
  await page.goto(`http://localhost:${ONE_ADDRESS}/entity/nowhere-page.test`);
  const notice = page.getByTestId("refusal");
  await expect(notice.getByRole("heading", { name: "You have had your share of this site for now" })).toBeVisible();
  await expect(notice).toContainText("Your lookups have had their share (3 a minute)");
  await expect(page.locator('meta[name="robots"]')).toHaveAttribute("content", /noindex/);
});

test("address_budget, the address's minute: 429 from the API, the page says why in words and is kept out of indexes; a document already known is served, not refused", async ({
  page,
  request,
}) => {
  const api = (q: string, client: string, refresh = false) =>
    request.get(`http://localhost:${ONE_ADDRESS}/api/resolve?q=${q}${refresh ? "&refresh=1" : ""}`, { headers: as(client) });
  // Spend the rest of the address's minute, one client a lookup, as fast as its 10 s let it.
  let spent = false;
  for (let i = 0; i < 20 && !spent; i++) {
    const r = await api(`spend${i}.test`, `203.0.113.${i}`);
    if (r.status() !== 429) continue;
    const { error } = await r.json();
    expect(error.refused).toBe("address_budget");
    if (/has had 3 requests in 10 s/.test(error.message))
      await new Promise((w) => setTimeout(w, Number(r.headers()["retry-after"]) * 1000));
    else {
      expect(error.message).toMatch(/has had the 12 requests a minute/);
      spent = true;
    }
  }
  expect(spent).toBe(true);
  const refused = await api("never-seen.test", "203.0.113.199");
  expect(refused.status()).toBe(429);
  expect(refused.headers()["retry-after"]).toMatch(/^\d+$/);
  expect((await refused.json()).error.refused).toBe("address_budget");
  // The address is known only once the fetch dials it, after the page's status was sent: the refusal
  // is said where the results would be, and the page asks not to be indexed.
  await page.setExtraHTTPHeaders(as("203.0.113.200"));
  await page.goto(`http://localhost:${ONE_ADDRESS}/entity/never-seen-either.test`);
  const notice = page.getByTestId("refusal");
  await expect(notice.getByRole("heading", { name: "This site's host has had enough requests for now" })).toBeVisible();
  await expect(notice).toContainText("has had the 12 requests a minute this resolver sends one address");
  await expect(notice).toContainText("Nothing was checked, so nothing here says anything about the publisher.");
  await expect(page.locator('meta[name="robots"]')).toHaveAttribute("content", /noindex/);
  await page.screenshot({ path: "test-results/screens/refused-address.png", fullPage: true });
  // minimal.test was fetched in the first test: asked afresh now, it is answered as known, not refused.
  const known = await api("minimal.test", "203.0.113.201", true);
  expect(known.status()).toBe(200);
  const body = await known.json();
  expect(body.results[0].entity.status).toBe("accepted");
  // Answered as last fetched, and said so: the response's own warning.
  expect(body.problems).toEqual([
    expect.objectContaining({
      code: "not_fetched_again",
      message: expect.stringMatching(/^Answered as last fetched, not fetched again now: /),
    }),
  ]);
  // A re-check now is not reported done: its page says what was not fetched again.
  await page.setExtraHTTPHeaders(as("203.0.113.202"));
  await page.goto(`http://localhost:${ONE_ADDRESS}/entity/minimal.test`);
  await page.getByRole("button", { name: /re-check now/i }).click();
  await expect(page).toHaveURL(/[?&]recheck=address_budget&retry=\d+&partly=1/);
  const rechecked = page.getByTestId("recheck-notice");
  await expect(rechecked).toHaveAttribute("data-outcome", "partly");
  await expect(rechecked).toContainText("Not all re-checked.");
  await expect(rechecked).toContainText("What could not be fetched again is shown as last fetched.");
  await rechecked.screenshot({ path: "test-results/screens/recheck-partly.png" });
  // The live check never passes a document known from before off as live: it says the refusal.
  await page.setExtraHTTPHeaders(as("203.0.113.203"));
  await page.goto(`http://localhost:${ONE_ADDRESS}/check?q=minimal.test`);
  await expect(page.getByTestId("refusal")).toContainText("has had the 12 requests a minute this resolver sends one address");
});

test("query_budget: the claims past a query's fetches are not checked, said on the card and named in the JSON", async ({
  page,
  request,
}) => {
  const r = await request.get(`http://localhost:${SMALL_QUERIES}/api/resolve?q=crowded.test`, { headers: as("192.0.2.50") });
  expect(r.status()).toBe(200);
  const claims: { not_checked?: string; reason?: string }[] = (await r.json()).results[0].credentials;
  const refused = claims.filter((c) => c.not_checked === "query_budget");
  expect(refused.length).toBeGreaterThan(0);
  for (const c of refused) expect(c.reason).toBe("limit");
  await page.setExtraHTTPHeaders(as("192.0.2.51"));
  expect((await page.goto(`http://localhost:${SMALL_QUERIES}/entity/crowded.test`))?.status()).toBe(200);
  await expect(page.getByText(/Not checked: this lookup has already started the 10 fetches one lookup may/).first()).toBeVisible();
});

test.describe("local_fault: this resolver out of file descriptors", () => {
  const PORT = 3111;
  let server: ChildProcess;
  test.afterAll(() => {
    server?.kill("SIGTERM");
  });

  /** One request on `agent`'s one kept-alive connection: opened before the limit falls, it needs no new descriptor. */
  const get = (agent: Agent, path: string) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const req = httpGet({ host: "127.0.0.1", port: PORT, path, agent, headers: as("192.0.2.77") }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on("error", reject);
    });

  test("503 with Retry-After and local_fault from the API, the page says it in words; never the publisher's failure, never kept", async ({
    request,
  }) => {
    server = startServer([path.resolve("web/serve.js")], { PORT: String(PORT), IDENT_TRUSTED_HOPS: "1", ...net.env });
    await ready(request, PORT, server);
    const pid = server.pid;
    if (pid === undefined) throw new Error("no server pid");
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // Warm every part a lookup uses (the route, the fetch thread), on the one connection.
      expect((await get(agent, "/api/resolve?q=minimal.test")).status).toBe(200);
      expect((await get(agent, "/entity/minimal.test")).status).toBe(200);
      // No descriptor left for a new socket: the process's limit at what it holds now.
      const soft = execFileSync("prlimit", [`--pid=${pid}`, "--nofile", "--output=SOFT", "--noheadings"], { encoding: "utf8" }).trim();
      // A new descriptor takes the lowest free number: the limit at that number leaves none.
      const held = new Set(readdirSync(`/proc/${pid}/fd`).map(Number));
      let lowestFree = 0;
      while (held.has(lowestFree)) lowestFree++;
      execFileSync("prlimit", [`--pid=${pid}`, `--nofile=${lowestFree}:`]);
      try {
        const api = await get(agent, "/api/resolve?q=alice.example");
        expect(api.status, api.body.slice(0, 600)).toBe(503);
        expect(api.headers["retry-after"]).toMatch(/^\d+$/);
        expect(JSON.parse(api.body).error).toMatchObject({ code: "busy", refused: "local_fault", retry_after_s: expect.any(Number) });
        const page = await get(agent, "/entity/bob.example");
        // On failure, the page's words (not its markup) say what it showed instead.
        expect(
          page.body,
          page.body
            .replace(/<(script|style)[^]*?<\/\1>/g, "")
            .replace(/<[^>]+>/g, " ")
            .slice(0, 1500),
        ).toContain("This resolver could not fetch just now");
        expect(page.body).toMatch(/<meta name="robots" content="[^"]*noindex/);
      } finally {
        execFileSync("prlimit", [`--pid=${pid}`, `--nofile=${soft}:`]);
      }
      // Never kept: with descriptors back, the same lookup is answered.
      const again = await get(agent, "/api/resolve?q=alice.example");
      expect(again.status).toBe(200);
      expect(JSON.parse(again.body).results[0].entity.status).toBe("accepted");
    } finally {
      agent.destroy();
    }
  });
});
