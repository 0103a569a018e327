#!/usr/bin/env node
// `npm run fleet`: a fleet on one machine (docs/deploying.md): PostgreSQL and Redis from Debian's
// binaries in a temporary folder on loopback, the sample network, and two app instances sharing
// them, on PORT and PORT + 1. Prints the URLs; Ctrl-C or SIGTERM stops everything and removes the
// folders.
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { buildOnce } from "./build-once.js";
import { SERVER_NODE_FLAGS } from "./server-flags.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const first = Number(process.env.PORT ?? 3000);
buildOnce(root, "fleet");

const { register } = await import("tsx/esm/api");
register();
const { startPostgres } = await import("../test/helpers/postgres.ts");
const { startRedis } = await import("../test/helpers/redis.ts");
const { spawnSampleNetwork } = await import("../test/network/spawn.ts");

const stops = [];
let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  console.log("fleet: stopping…");
  for (const s of stops.reverse()) await s().catch((err) => console.error(`fleet: ${err.message}`));
  process.exit(code);
}
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));

try {
  const postgres = await startPostgres();
  stops.push(() => postgres.stop());
  const databaseUrl = await postgres.database("ident");
  const redis = await startRedis();
  stops.push(() => redis.stop());
  const net = await spawnSampleNetwork();
  stops.push(() => net.stop());

  const SEEDS = "alice.example,acme.example,carol.example,hartley-law.example,mallory.example,press.example,weekly-dispatch.example";
  const instances = ["a", "b"].map((name, i) => {
    const port = String(first + i);
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, path.join(root, "web", "serve.js")], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        IDENT_CRAWL_SEEDS: SEEDS,
        ...process.env,
        ...net.env,
        PORT: port,
        IDENT_METRICS_ADDR: `127.0.0.1:${9464 + i}`,
        IDENT_DATABASE_URL: databaseUrl,
        IDENT_REDIS_URL: redis.url,
      },
    });
    // Each line (JSON log lines included) prefixed with its instance.
    for (const stream of [child.stdout, child.stderr])
      createInterface({ input: stream }).on("line", (line) => console.log(`[${name}] ${line}`));
    child.on("exit", (code) => {
      if (!stopping) console.error(`fleet: instance ${name} exited with ${code}`);
      void stop(code ?? 1);
    });
    stops.push(
      () =>
        new Promise((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once("exit", resolve);
          child.kill("SIGTERM");
        }),
    );
    return { name, base: `http://localhost:${port}` };
  });

  console.log(`
ident resolver fleet: two instances, one PostgreSQL, one Redis, the sample network

  instance a   ${instances[0].base}/
  instance b   ${instances[1].base}/
  PostgreSQL   ${databaseUrl}
  Redis        ${redis.url}

  ${instances[0].base}/search?q=alice.example   resolve on a…
  ${instances[1].base}/search?q=alice.example   …and b answers from the shared cache
  ${instances[1].base}/readyz                   the store and Redis answer?
  http://127.0.0.1:9464/metrics                  Prometheus text of a (b's on 9465)

Ctrl-C stops everything.
`);
} catch (err) {
  console.error(`fleet: ${err instanceof Error ? err.message : String(err)}`);
  await stop(1);
}
