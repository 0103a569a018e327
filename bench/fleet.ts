/**
 * The fleet's figures (docs/deploying.md), with a real redis-server on loopback:
 *
 *   sharing   publisher requests per URL for 100 concurrent cold lookups spread over 2 instances   goal 1
 *   warm      lookups/s of a cached entity from 1 and from 2 instances (server processes, same run)
 *   tier      warm resolutions/s in process: Redis behind a 5 s local tier, and Redis on every read,
 *             each ÷ the in-process cache alone (same run)
 *
 * The sample network runs in this process, so that its request counts can be read.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { parseConnectTo } from "ident-resolver/node";
import { createDocumentCache } from "ident-resolver";
import { createFetcher } from "ident-resolver/node";
import { connectRedis } from "ident-resolver/redis";
import { createSharedDocuments } from "ident-resolver/redis";
import { createResolverCore } from "ident-resolver";
import { startRedis } from "../test/helpers/redis";
import { startSampleNetwork } from "../test/network/server";
import { median } from "./stats";
import { SERVER_NODE_FLAGS } from "../scripts/server-flags.js";
import { endsWithRun } from "../test/helpers/scratch";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ROUNDS = 3;

async function waitFor(url: string, ms: number) {
  const until = Date.now() + ms;
  for (;;) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    if (Date.now() > until) throw new Error(`${url} did not answer within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Warm requests per second over `seconds`, spread evenly over `urls` (one load generator each, 8 connections in all). */
async function rps(urls: string[], seconds: number): Promise<number> {
  const runs = await Promise.all(
    urls.map((url) => autocannon({ url, connections: Math.max(1, Math.round(8 / urls.length)), duration: seconds })),
  );
  for (const r of runs) if (r.non2xx > 0 || r.errors > 0) throw new Error(`${r.url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return runs.reduce((sum, r) => sum + r.requests.average, 0);
}

export async function benchFleet(): Promise<void> {
  if (!existsSync(path.join(root, ".next", "BUILD_ID"))) {
    console.log("fleet     skipped: no build (run `npm run build` first)");
    return;
  }
  if (!existsSync("/usr/bin/redis-server")) {
    console.log("fleet     skipped: no redis-server (apt-get install redis-server)");
    return;
  }
  const net = await startSampleNetwork({ delayMs: 50 });
  const redis = await startRedis();
  const apps: ChildProcess[] = [];
  try {
    const ports = [3220, 3221];
    for (const port of ports) {
      apps.push(
        endsWithRun(
          spawn(process.execPath, [...SERVER_NODE_FLAGS, path.join(root, "web", "serve.js")], {
            cwd: root,
            stdio: ["ignore", "ignore", "inherit"],
            env: {
              ...process.env,
              ...net.env,
              IDENT_LOG_LEVEL: "warn",
              IDENT_DATA_DIR: ":memory:",
              IDENT_CRAWL: "0",
              IDENT_REDIS_URL: redis.url,
              // One client sends everything here: its own limits are not what is measured.
              IDENT_COLD_LOOKUPS_PER_MIN: "1000000",
              PORT: String(port),
            },
          }),
        ),
      );
    }
    const bases = ports.map((p) => `http://localhost:${p}`);
    await Promise.all(bases.map((b) => waitFor(`${b}/healthz`, 60_000)));

    // Sharing: 100 lookups of one cold domain and its claims, at once, half on each.
    net.resetCounts();
    const statuses = await Promise.all(
      Array.from({ length: 100 }, (_, i) => fetch(`${bases[i % 2]}/api/resolve?q=acme.example`).then((r) => r.status)),
    );
    const perUrl = [...net.requests.values()].filter((n) => n > 0);
    console.log(
      `fleet     sharing: 100 concurrent cold lookups over 2 instances (${statuses.filter((s) => s === 200).length}× 200): ` +
        `${perUrl.length} URLs, at most ${Math.max(...perUrl)} publisher request per URL (goal 1), ${perUrl.reduce((a, b) => a + b, 0)} in all`,
    );

    // Warm: the same cached lookup from one instance, then from both; rounds alternate.
    const url = (b: string) => `${b}/api/resolve?q=alice.example`;
    for (const b of bases) await fetch(url(b));
    await rps([url(bases[0]!)], 1);
    const one: number[] = [];
    const two: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      one.push(await rps([url(bases[0]!)], 3));
      two.push(await rps(bases.map(url), 3));
    }
    console.log(
      `fleet     warm lookups: 1 instance ${median(one).toFixed(0)} req/s, 2 instances ${median(two).toFixed(0)} req/s ` +
        `(ratio ${median(two.map((t, i) => t / (one[i] ?? NaN))).toFixed(2)} on ${(await import("node:os")).availableParallelism()} cores, the load generator included; medians of ${ROUNDS})`,
    );
  } finally {
    for (const app of apps) app.kill("SIGTERM");
  }

  // The Redis tier's cost, in process: a warm resolution of alice.example, 10 documents.
  const parsed = parseConnectTo(net.connectTo);
  if (!parsed.ok) throw new Error(parsed.message);
  const fetcher = createFetcher({ ca: [net.caPem], connectTo: parsed.entries, userAgent: "ident-resolver/bench" });
  const link = connectRedis(redis.url, { log: () => {} });
  while (!link.usable()) await new Promise((r) => setTimeout(r, 20));
  const shared = createSharedDocuments(link, { maxAgeMs: 86_400_000, failureMs: 300_000, fetchTimeoutMs: 10_000 });
  const resolvers = {
    local: createResolverCore({ fetch: fetcher, cache: createDocumentCache() }),
    tiered: createResolverCore({ fetch: shared.singleFlight(fetcher), cache: createDocumentCache({ shared }) }),
    redis: createResolverCore({ fetch: shared.singleFlight(fetcher), cache: createDocumentCache({ shared, localMs: 0 }) }),
  };
  const perSecond = async (r: (typeof resolvers)[keyof typeof resolvers]) => {
    const until = performance.now() + 1000;
    let n = 0;
    while (performance.now() < until) {
      await r.resolveEntity("alice.example");
      n++;
    }
    return n;
  };
  for (const r of Object.values(resolvers)) await perSecond(r);
  const rounds = { local: [] as number[], tiered: [] as number[], redis: [] as number[] };
  for (let i = 0; i < ROUNDS + 2; i++) for (const k of ["local", "tiered", "redis"] as const) rounds[k].push(await perSecond(resolvers[k]));
  const ratio = (k: "tiered" | "redis") => median(rounds[k].map((v, i) => v / (rounds.local[i] ?? NaN))).toFixed(2);
  console.log(
    `fleet     tier: warm resolutions/s in process: in-process cache ${median(rounds.local).toFixed(0)}; ` +
      `Redis behind the 5 s local tier ${median(rounds.tiered).toFixed(0)} (× ${ratio("tiered")}); Redis on every read ${median(rounds.redis).toFixed(0)} (× ${ratio("redis")})`,
  );
  await link.close();
  await fetcher.close();
  await redis.stop();
  await net.close();
}
