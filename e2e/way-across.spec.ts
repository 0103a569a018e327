/**
 * docs/deploying.md#moving-the-index as an operator follows it: an embedded store with lookups
 * recorded is moved to a PostgreSQL server by scripts/way-across.sh, which runs each step the page
 * gives (export, import, compare, two instances, both asked). The instances serve the same entity
 * from PostgreSQL, with every change of verdict the embedded store had recorded.
 */
import { execFile } from "node:child_process";
import { request as httpRequest } from "node:http";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startPostgres, type PostgresServer } from "../test/helpers/postgres";
import { spawnSampleNetwork, type SpawnedNetwork } from "../test/network/spawn";
import { ready, startServer } from "./helpers/server";
import { expect, test } from "./helpers/test";
import type { APIRequestContext } from "@playwright/test";

test.describe.configure({ mode: "serial" });

const run = (command: string, args: string[], env: Record<string, string>, timeout = 60_000) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(command, args, { env: Object.assign({}, process.env, env), timeout }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });

/** `domain`'s line in an export of the stopped store in `dataDir` (`ident store export`), if it holds it. */
async function exportedEntity(dataDir: string, domain: string) {
  const exported = await run(process.execPath, ["bin/ident.js", "store", "export"], { IDENT_DATA_DIR: dataDir });
  expect(exported.code, exported.stderr).toBe(0);
  return exported.stdout
    .split("\n")
    .filter((l) => l.startsWith('{"entity"'))
    .map((l) => JSON.parse(l) as { entity: { domain: string; status: string }; claims: { verified: boolean }[] })
    .find((l) => l.entity.domain === domain);
}

let net: SpawnedNetwork;
let pg: PostgresServer;
let dir: string;
test.beforeAll(async () => {
  test.setTimeout(120_000);
  [net, pg] = await Promise.all([spawnSampleNetwork(), startPostgres()]);
  dir = mkdtempSync(path.join(tmpdir(), "ident-way-across-"));
});
test.afterAll(async () => {
  await Promise.all([net?.stop(), pg?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

test("the way across: embedded → PostgreSQL, two instances serving the same entity, nothing lost", async () => {
  test.setTimeout(180_000);
  const dataDir = path.join(dir, "data");
  // An embedded index with lookups recorded, as a single server's would be.
  for (const q of ["alice.example", "acme.example", "mallory.example"]) {
    const r = await run(
      process.execPath,
      ["bin/ident.js", "resolve", q],
      Object.assign({}, net.env, { IDENT_DATA_DIR: dataDir, IDENT_CRAWL: "0" }),
    );
    expect(r.code, r.stderr).toBe(0);
  }
  const moved = await run(
    "sh",
    ["scripts/way-across.sh"],
    Object.assign({}, net.env, {
      FROM_DATA_DIR: dataDir,
      TO_DATABASE_URL: await pg.database("way_across"),
      PORT_A: "3114",
      PORT_B: "3115",
      CHECK_DOMAIN: "alice.example",
      IDENT_CRAWL: "0",
      IDENT_LOG_LEVEL: "warn",
    }),
    150_000,
  );
  expect(moved.code, `${moved.stdout}\n${moved.stderr}`).toBe(0);
  for (const step of ["1. export", "2. import", "3. compare", "4. start two instances", "5. check both instances"])
    expect(moved.stdout).toContain(step);
  expect(moved.stdout).toMatch(/way-across: done: \d+ lines moved; both instances answer alice\.example's history from PostgreSQL/);
  expect(moved.stderr).toMatch(/ident: imported 3 entities/);
});

/** An instance on the sample network with an embedded index of its own (`dataDir`), answering on `port`: to be stopped by the test. */
async function instanceToStop(request: APIRequestContext, name: string, port: number) {
  const dataDir = path.join(dir, name);
  const server = startServer(
    [path.resolve("web/serve.js")],
    Object.assign({}, net.env, { PORT: String(port), IDENT_DATA_DIR: dataDir, IDENT_METRICS_ADDR: "off" }),
  );
  await ready(request, port, server);
  return { server, dataDir };
}

test("an instance stopped with SIGTERM answers the lookup in progress, records it, and exits 0 (upgrading without losing results)", async ({
  request,
}) => {
  test.setTimeout(120_000);
  const PORT = 3116;
  const { server, dataDir } = await instanceToStop(request, "stopping", PORT);
  // The API's description, read now: the checked request reads it once per server, and this one stops.
  expect((await request.get(`http://localhost:${PORT}/api/openapi.json`)).status()).toBe(200);
  // unhurried.test's credential answers after 2 s: the lookup is in progress when the signal comes.
  const lookup = request.get(`http://localhost:${PORT}/api/resolve?q=unhurried.test`, { timeout: 30_000 });
  await new Promise((r) => setTimeout(r, 500));
  // Listened for before the signal: an instance with nothing left to do may be gone before the next await.
  const exited = once(server, "exit");
  server.kill("SIGTERM");
  const answer = await lookup;
  expect(answer.status()).toBe(200);
  expect((await answer.json()).results[0].credentials[0].verified).toBe(true);
  const [code] = (await exited) as [number | null];
  expect(code).toBe(0);
  // Recorded before the process ended: the stopped store holds it.
  const unhurried = await exportedEntity(dataDir, "unhurried.test");
  expect(unhurried?.claims.map((c) => c.verified)).toEqual([true]);
});

test("an instance stopped with SIGTERM waits for the lookup whose client went away, and records it (upgrading without losing results)", async ({
  request,
}) => {
  test.setTimeout(120_000);
  const PORT = 3117;
  const { server, dataDir } = await instanceToStop(request, "abandoned", PORT);
  // sluggish.test's entity document answers after 3 s; the client asks, and leaves after 0.5 s.
  await new Promise<void>((resolve) => {
    const asked = httpRequest(`http://localhost:${PORT}/api/resolve?q=sluggish.test`);
    asked.on("error", () => undefined);
    asked.end();
    setTimeout(() => {
      asked.destroy();
      resolve();
    }, 500);
  });
  // No request is in progress now; the lookup is, for 2.5 s more (more than the fetcher's 2 s to close).
  // Listened for before the signal: an instance with nothing left to do may be gone before the next await.
  const exited = once(server, "exit");
  server.kill("SIGTERM");
  const [code] = (await exited) as [number | null];
  expect(code).toBe(0);
  const sluggish = await exportedEntity(dataDir, "sluggish.test");
  expect(sluggish?.entity.status).toBe("accepted");
});
