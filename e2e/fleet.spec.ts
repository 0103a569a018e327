/**
 * Two real server processes (`npm start`) sharing one redis-server and one PostgreSQL started from
 * Debian's binaries (docs/deploying.md): health, readiness through an outage of each engine,
 * Prometheus text whose counters move as predicted, request ids, and one index for both.
 */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import type { APIRequestContext } from "@playwright/test";
import { expect, test } from "./helpers/test";
import { startPostgres, type PostgresServer } from "../test/helpers/postgres";
import { startRedis, type RedisServer } from "../test/helpers/redis";
import { spawnSampleNetwork, type SpawnedNetwork } from "../test/network/spawn";
import { ready, startServer } from "./helpers/server";

const PORTS = [3107, 3108] as const;
const [A, B] = PORTS.map((p) => `http://localhost:${p}`) as [string, string];
test.describe.configure({ mode: "serial", timeout: 120_000 });

let net: SpawnedNetwork;
let redis: RedisServer;
let postgres: PostgresServer;
let servers: ChildProcess[] = [];
test.beforeAll(async ({ request }) => {
  test.setTimeout(180_000);
  [net, redis, postgres] = await Promise.all([spawnSampleNetwork(), startRedis(), startPostgres()]);
  const database = await postgres.database("fleet_e2e");
  servers = PORTS.map((port) =>
    startServer([path.resolve("web/serve.js")], {
      PORT: String(port),
      // docs/deploying.md#metrics: the operators' listener, never the public port.
      IDENT_METRICS_ADDR: `127.0.0.1:${port + 6000}`,
      IDENT_DATABASE_URL: database,
      IDENT_REDIS_URL: redis.url,
      IDENT_LOG_LEVEL: "warn",
      ...net.env,
    }),
  );
  await Promise.all(PORTS.map((port, i) => ready(request, port, servers[i])));
});
test.afterAll(async () => {
  for (const s of servers) s.kill("SIGTERM");
  await net?.stop();
  await redis?.stop();
  await postgres?.stop();
});

/**
 * Every sample of a Prometheus text exposition; throws on a line that is not one. Values as
 * Prometheus reads them (Go's ParseFloat: NaN and Inf in any case; prom-client writes "Nan").
 */
function parsePrometheus(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  const typed = new Set<string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      typed.add(type[1]!);
      continue;
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue;
    const sample =
      /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? (-?[0-9.e+-]+|[nN][aA][nN]|[+-]?[iI][nN][fF])$/.exec(
        line,
      );
    if (!sample) throw new Error(`not Prometheus text: ${line}`);
    const labels = Object.fromEntries(
      [...(sample[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    const name = sample[1]!;
    if (![...typed].some((t) => name === t || name.startsWith(`${t}_`))) throw new Error(`a sample with no TYPE: ${line}`);
    samples.push({ name, labels, value: /^[nN]/.test(sample[3]!) ? NaN : Number(sample[3]!.replace(/inf/i, "Infinity")) });
  }
  return samples;
}

async function metric(request: APIRequestContext, base: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const response = await request.get(`http://127.0.0.1:${Number(new URL(base).port) + 6000}/metrics`);
  expect(response.headers()["content-type"]).toContain("text/plain");
  const found = parsePrometheus(await response.text()).filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return found.reduce((sum, s) => sum + s.value, 0);
}

async function readiness(request: APIRequestContext, base: string) {
  const response = await request.get(`${base}/readyz`);
  return {
    status: response.status(),
    body: (await response.json()) as { status: string; checks: Record<string, { ok: boolean; detail?: string }> },
  };
}

/** Polls `/readyz` until it answers `status` (at most 20 s). */
async function readyzBecomes(request: APIRequestContext, base: string, status: number) {
  await expect.poll(async () => (await readiness(request, base)).status, { timeout: 20_000 }).toBe(status);
}

test("both instances are healthy and ready, with the store and Redis named", async ({ request }) => {
  for (const base of [A, B]) {
    const health = await request.get(`${base}/healthz`);
    expect(health.status()).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    // Ready once its links are made: a load balancer polls, so does this.
    await readyzBecomes(request, base, 200);
    expect(await readiness(request, base)).toEqual({
      status: 200,
      body: { status: "ready", checks: { store: { ok: true }, redis: { ok: true } } },
    });
  }
});

test("/metrics parses as Prometheus text; a lookup on A counts its fetches and sockets there, and B answers it from the shared tier", async ({
  request,
}) => {
  const foundBefore = await metric(request, A, "ident_fetches_total", { outcome: "found" });
  const sharedHitsBefore = await metric(request, B, "ident_cache_lookups_total", { tier: "shared", result: "hit" });
  const fetchesOnBBefore = await metric(request, B, "ident_fetches_total");
  expect((await request.get(`${A}/api/resolve?q=alice.example`)).status()).toBe(200);
  expect(await metric(request, A, "ident_fetches_total", { outcome: "found" })).toBeGreaterThan(foundBefore);
  const onB = await request.get(`${B}/api/resolve?q=alice.example`);
  expect(onB.status()).toBe(200);
  expect((await onB.json()).results[0].entity.status).toBe("accepted");
  expect(await metric(request, B, "ident_cache_lookups_total", { tier: "shared", result: "hit" })).toBeGreaterThan(sharedHitsBefore);
  expect(await metric(request, B, "ident_fetches_total")).toBe(fetchesOnBBefore);
  expect(await metric(request, A, "ident_fetch_duration_seconds_count")).toBeGreaterThan(0);
  // The fetch thread reports its sockets every 200 ms; the cap is the default 64.
  await expect.poll(() => metric(request, A, "ident_outbound_sockets_peak")).toBeGreaterThan(0);
  expect(await metric(request, A, "ident_outbound_sockets_peak")).toBeLessThanOrEqual(64);
});

test("an entity resolved on A is found by a name search on B", async ({ request }) => {
  expect((await request.get(`${A}/api/resolve?q=acme.example`)).status()).toBe(200);
  await expect
    .poll(async () =>
      ((await (await request.get(`${B}/api/search?q=acme`)).json()) as { results: { domain: string }[] }).results.map((r) => r.domain),
    )
    .toContain("acme.example");
});

test("each response carries a request id: the proxy's when well formed, else a new one", async ({ request }) => {
  const given = await request.get(`${A}/healthz`, { headers: { "x-request-id": "lb-7f3a.1" } });
  expect(given.headers()["x-request-id"]).toBe("lb-7f3a.1");
  const hostile = await request.get(`${A}/healthz`, { headers: { "x-request-id": '<script>"x"</script>' } });
  expect(hostile.headers()["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
});

test("Redis stopped: /readyz says so, lookups are still answered; started again: ready", async ({ request }) => {
  await redis.pause();
  try {
    await readyzBecomes(request, B, 503);
    const { body } = await readiness(request, B);
    expect(body.checks.redis).toMatchObject({ ok: false, detail: expect.stringContaining("own cache") });
    expect(body.checks.store).toEqual({ ok: true });
    for (const q of ["bob.example", "carol.example"]) expect((await request.get(`${B}/api/resolve?q=${q}`)).status()).toBe(200);
  } finally {
    await redis.resume();
  }
  await readyzBecomes(request, A, 200);
  await readyzBecomes(request, B, 200);
});

test("PostgreSQL stopped: /readyz says so, lookups are still answered; started again: ready, and what waited is recorded", async ({
  request,
}) => {
  await postgres.pause();
  try {
    await readyzBecomes(request, A, 503);
    expect((await readiness(request, A)).body.checks.store).toMatchObject({ ok: false });
    expect((await request.get(`${A}/api/resolve?q=gamma.example&refresh=1`)).status()).toBe(200);
    expect(await metric(request, A, "ident_records_waiting")).toBeGreaterThan(0);
  } finally {
    await postgres.resume();
  }
  await readyzBecomes(request, A, 200);
  await expect.poll(() => metric(request, A, "ident_records_waiting"), { timeout: 20_000 }).toBe(0);
  expect((await request.get(`${B}/api/entity/gamma.example/history`)).status()).toBe(200);
});
