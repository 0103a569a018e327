/**
 * The index at size (docs/decisions.md#search-at-size), for `npm run bench -- scale [sizes]`
 * (`BENCH_ONLY=scale`): a synthetic index (bench/scale-data.ts: skewed names in several scripts, 2
 * claims and 3 changes each, one issuer with every credential) written in the export format and built
 * through `ident store import`. Sizes: `100k`, `1m`, `10m` on a PostgreSQL server started here, and
 * `embedded` (100k on the embedded store); none named, 100k, embedded and 1m (`BENCH_SCALE_MILLION=0`
 * skips 1m, `BENCH_SCALE_EMBEDDED=0` embedded). For each, the built app is started on it and prints:
 *
 *   import    its time, entities a second and the command's peak RSS (goal ≥ 20,000/s, ≤ +256 MB at 10M)
 *   jobs      re-verification jobs claimed a second by 4 processes at once, and how many were claimed
 *             twice (goal ≥ 1,000/s, 0)
 *   search    p50 / p95 / max of each kind through /api/search over HTTP, one searcher and then 8 at
 *             once, each request a text the app's cache has not seen (bench/scale-reads.ts)
 *   sitemap   every sitemap of /sitemap.xml read through: time, and the app's peak RSS over its idle
 *             RSS (goal ≤ +64 MB)
 *   pages     the badge, the largest issuer's page, the home page and sitemap files, p95 over HTTP
 *   home      the home page's queries and the counts alone, from the store (goal p95 < 10 ms; PostgreSQL)
 *   changes   pages of /api/changes at the start, middle and end of the changes (goal p95 < 10 ms)
 *   size      the store's bytes per entity
 *   plans     every statement of one search of each kind and of the issuer's page under EXPLAIN
 *             (ANALYZE, BUFFERS) (bench/scale-explain.ts; PostgreSQL)
 */
import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { rmSync, statfsSync } from "node:fs";
import { once } from "node:events";
import { request } from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ident, rssMb, writeSynthetic } from "./export";
import { p95, startApp, stopApp, type App } from "./load-kit";
import { SKEWED } from "./scale-data";
import { planFigures } from "./scale-explain";
import { ms, pageFigures, REQUESTS, SCALE_APP_ENV, searchFigures, timed } from "./scale-reads";
import { median } from "./stats";
import { startPostgres } from "../test/helpers/postgres";
import { endsWithRun, scratchDir } from "../test/helpers/scratch";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CLAIMERS = 4;
const CLAIM_SECONDS = 5;

/** Every sitemap read through, one after another; the app's RSS sampled every 50 ms. Also the sitemaps' paths. */
async function sitemapFigures(app: App): Promise<{ line: string; maps: string[] }> {
  const idle = rssMb(app.pid);
  let peak = idle;
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(app.pid))), 50);
  const started = performance.now();
  const index = await new Promise<string>((resolve, reject) => {
    request({ host: "127.0.0.1", port: app.port, path: "/sitemap.xml", agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve(body));
    })
      .on("error", reject)
      .end();
  });
  const maps = [...index.matchAll(/<loc>[^<]*(\/sitemaps\/\d+\.xml)<\/loc>/g)].map((m) => m[1] ?? "");
  let bytes = 0;
  for (const m of maps) bytes += (await timed(app.port, m)).bytes;
  const s = (performance.now() - started) / 1000;
  clearInterval(timer);
  return {
    maps,
    line: `sitemap      ${maps.length} sitemaps, ${(bytes / 1024 / 1024).toFixed(0)} MB read in ${s.toFixed(1)} s; app RSS idle ${idle.toFixed(0)} MB, peak ${peak.toFixed(0)} MB (+${(peak - idle).toFixed(0)} MB, goal ≤ +64)`,
  };
}

/** {@link CLAIMERS} processes taking jobs 100 at a time for {@link CLAIM_SECONDS} s: jobs a second, and any taken twice. */
async function jobFigures(env: Record<string, string>): Promise<string> {
  const script = `
    import { openDb } from ${JSON.stringify(path.join(root, "lib/store/db.ts"))};
    import { takeJobs } from ${JSON.stringify(path.join(root, "lib/store/queue.ts"))};
    const url = process.env.IDENT_DATABASE_URL;
    const db = await openDb(url ? { kind: "server", url } : { kind: "embedded", dataDir: process.env.IDENT_DATA_DIR });
    const taken = [];
    const until = Date.now() + ${CLAIM_SECONDS * 1000};
    while (Date.now() < until) {
      const jobs = await takeJobs(db, 100, 3600);
      if (jobs.length === 0) break;
      taken.push(...jobs);
    }
    const end = Date.now();
    await db.close();
    process.stdout.write(JSON.stringify({ taken, start: until - ${CLAIM_SECONDS * 1000}, end }));`;
  const runs = Array.from({ length: CLAIMERS }, async () => {
    const child = endsWithRun(
      spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: root,
        env: Object.assign({}, process.env, env),
        stdio: ["ignore", "pipe", "inherit"],
      }),
    );
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (c: string) => (out += c));
    await once(child, "exit");
    return JSON.parse(out) as { taken: string[]; start: number; end: number };
  });
  const done = await Promise.all(runs);
  // From the first claim of any of them to the last of all.
  const s = (Math.max(...done.map((d) => d.end)) - Math.min(...done.map((d) => d.start))) / 1000;
  const all = done.flatMap((d) => d.taken);
  const twice = all.length - new Set(all).size;
  return `jobs         ${CLAIMERS} processes claimed ${all.length.toLocaleString("en-US")} jobs in ${s.toFixed(1)} s: ${Math.round(all.length / s).toLocaleString("en-US")}/s (goal ≥ 1,000), ${twice} claimed twice (goal 0)`;
}

/**
 * The home page's queries and the feed of every change (docs/decisions.md#the-home-page,
 * docs/api.md#changes): the overview read straight from the store (its three queries together), the
 * counts alone, and pages of /api/changes over HTTP at its start, its middle and its end, each request
 * a cursor of its own (goal p95 < 10 ms each, the counts costing the same at any size).
 */
async function overviewFigures(app: App, env: Record<string, string>): Promise<string[]> {
  const location = env.IDENT_DATABASE_URL
    ? { kind: "server" as const, url: env.IDENT_DATABASE_URL }
    : { kind: "embedded" as const, dataDir: env.IDENT_DATA_DIR ?? null };
  const { openStore } = await import("ident-resolver/store");
  const { indexCounts } = await import("ident-resolver/store");
  // The app holds the embedded store's folder: only a server's is read from here too.
  if (location.kind === "embedded") return [];
  const store = await openStore(location);
  try {
    const time = async (work: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < REQUESTS + 5; i++) {
        const t0 = performance.now();
        await work();
        if (i >= 5) times.push(performance.now() - t0);
      }
      return `p50 ${ms(median(times))} / p95 ${ms(p95(times))} ms`;
    };
    const overview = await time(() => store.overview(10, 5));
    const counts = await time(() => indexCounts(store.db));
    // Cursors at the start, the middle and the end of the changes, one a request.
    const all = await store.db.query<{ n: string }>("SELECT count(*) AS n FROM changes");
    const total = Number(all[0]?.n ?? 0);
    const cursorsAt = async (offset: number) => {
      const rows = await store.db.query<{ position: string }>(
        "SELECT position::text AS position FROM changes WHERE position IS NOT NULL ORDER BY position OFFSET $1 LIMIT $2",
        [offset, REQUESTS + 5],
      );
      const { cursorOf } = await import("ident-resolver/store");
      return rows.map(cursorOf);
    };
    const pages: string[] = [];
    for (const [where, offset] of [
      ["start", 0],
      ["middle", Math.floor(total / 2)],
      ["end", Math.max(0, total - REQUESTS - 55)],
    ] as const) {
      const cursors = await cursorsAt(offset);
      const times: number[] = [];
      for (const [i, c] of cursors.entries()) {
        const r = await timed(app.port, `/api/changes?limit=50&after=${c}`);
        if (r.status !== 200) throw new Error(`/api/changes answered ${r.status}`);
        // The first five warm the route and the engine's plan, as for the queries above.
        if (i >= 5) times.push(r.ms);
      }
      pages.push(`${where} p95 ${ms(p95(times))} ms`);
    }
    return [
      `home         its queries (counts, latest 10 changes, top 5 issuers) from the store: ${overview} (goal p95 < 10 ms); the counts alone ${counts}`,
      `changes      /api/changes pages of 50 over HTTP, a cursor each, ${total.toLocaleString("en-US")} changes: ${pages.join(", ")} (goal p95 < 10 ms)`,
    ];
  } finally {
    await store.close();
  }
}

async function diskFigures(env: Record<string, string>, n: number): Promise<string> {
  let bytes: number;
  if (env.IDENT_DATABASE_URL) {
    const { default: pg } = await import("pg");
    const client = new pg.Client(env.IDENT_DATABASE_URL);
    await client.connect();
    const { rows } = await client.query<{ n: string }>("SELECT pg_database_size(current_database()) AS n");
    await client.end();
    bytes = Number(rows[0]?.n);
  } else bytes = Number(execFileSync("du", ["-sb", env.IDENT_DATA_DIR ?? ""], { encoding: "utf8" }).split("\t")[0]);
  return `size         ${(bytes / 1024 / 1024).toFixed(0)} MB on disk: ${Math.round(bytes / n).toLocaleString("en-US")} bytes an entity`;
}

/** Sizes from which the file is not written whole first (`BENCH_SCALE_PIPED_FROM`): it is read from a pipe as it is written (10M: 21 GB). */
const PIPED_FROM = Number(process.env.BENCH_SCALE_PIPED_FROM ?? 5_000_000);

/**
 * The synthetic index written in the export format and imported by `ident store import`: its time,
 * rate and peak RSS. A file of {@link PIPED_FROM} entities or more goes through a pipe, its writer in
 * this process on the same two cores, as the disk would not hold it beside the store.
 */
async function importFigures(n: number, dir: string, env: Record<string, string>): Promise<string> {
  const file = path.join(dir, `scale-${n}.ndjson`);
  const piped = n >= PIPED_FROM;
  let written = NaN;
  const write = async () => {
    const t0 = performance.now();
    await writeSynthetic(file, n, SKEWED);
    written = (performance.now() - t0) / 1000;
  };
  if (piped) execFileSync("mkfifo", [file]);
  else await write();
  const [into] = await Promise.all([ident(["store", "import", file], env), piped ? write() : Promise.resolve()]);
  rmSync(file, { force: true });
  return (
    `import       ${into.s.toFixed(0)} s (${Math.round(n / into.s).toLocaleString("en-US")} entities/s, goal ≥ 20,000), the command's peak RSS ${into.peak.toFixed(0)} MB (goal ≤ 256); ` +
    (piped
      ? `read from a pipe as it was written (${written.toFixed(0)} s of writing)`
      : `the file written first in ${written.toFixed(0)} s`)
  );
}

/** A size as named on the command line: `100k`, `1m`, `10m`. */
const sizeNamed = (name: string) => Number(/^(\d+)/.exec(name)?.[1]) * (name.endsWith("m") ? 1_000_000 : 1000);

type Run = {
  label: string;
  n: number;
  env: (pg: Awaited<ReturnType<typeof startPostgres>>, dir: string) => Promise<Record<string, string>>;
};
const onServer = (n: number, name: string): Run => ({
  label: "PostgreSQL",
  n,
  env: async (pg) => ({ IDENT_DATABASE_URL: await pg.database(`scale_${name}`) }),
});
const embeddedRun: Run = { label: "embedded", n: 100_000, env: async (_pg, dir) => ({ IDENT_DATA_DIR: path.join(dir, "embedded") }) };

/** The runs asked for: the sizes named after `scale`, or the usual three. */
function runsAsked(): Run[] {
  const named = process.argv.slice(2).filter((a) => /^(\d+[km]|embedded)$/.test(a));
  if (named.length > 0) return named.map((a) => (a === "embedded" ? embeddedRun : onServer(sizeNamed(a), a)));
  const runs = [onServer(100_000, "100k")];
  if (process.env.BENCH_SCALE_EMBEDDED !== "0") runs.push(embeddedRun);
  if (process.env.BENCH_SCALE_MILLION !== "0") runs.push(onServer(1_000_000, "1m"));
  return runs;
}

/** Sets `settings` on the bench's PostgreSQL server (those a reload takes). */
async function serverSettings(pg: Awaited<ReturnType<typeof startPostgres>>, settings: Record<string, string>): Promise<void> {
  const { default: pgClient } = await import("pg");
  const client = new pgClient.Client(pg.url);
  await client.connect();
  try {
    for (const [name, value] of Object.entries(settings)) await client.query(`ALTER SYSTEM SET ${name} = '${value}'`);
    await client.query("SELECT pg_reload_conf()");
  } finally {
    await client.end();
  }
}

/** The machine, as every figure depends on it. */
function machine(dir: string): string {
  const { bavail, bsize } = statfsSync(dir);
  const pgVersion = (() => {
    try {
      return execFileSync("pg_config", ["--version"], { encoding: "utf8" }).trim();
    } catch {
      return "PostgreSQL (version unknown)";
    }
  })();
  return `scale     on ${os.cpus().length} cores, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB of memory, ${((bavail * bsize) / 1024 ** 3).toFixed(0)} GiB free disk; ${pgVersion}; Node ${process.version}`;
}

/** One size: the file written, imported, the app started on it and read, the plans shown. */
async function scaleRun(run: Run, pg: Awaited<ReturnType<typeof startPostgres>>, dir: string): Promise<void> {
  const env = await run.env(pg, dir);
  const lines = [await importFigures(run.n, dir, env)];
  // The embedded store is one process's: a fleet's instances share a server.
  if (env.IDENT_DATABASE_URL) lines.push(await jobFigures(env));
  const app = await startApp(3290, Object.assign({}, SCALE_APP_ENV, env));
  try {
    lines.push(...(await searchFigures(app, run.n)));
    const sitemaps = await sitemapFigures(app);
    lines.push(sitemaps.line);
    lines.push(...(await pageFigures(app, run.n, sitemaps.maps)));
    lines.push(...(await overviewFigures(app, env)));
  } finally {
    await stopApp(app);
  }
  lines.push(await diskFigures(env, run.n));
  if (env.IDENT_DATABASE_URL) lines.push(...(await planFigures(env.IDENT_DATABASE_URL, run.n)));
  console.log(`scale     ${run.label}, ${run.n.toLocaleString("en-US")} entities (one run)\n          ${lines.join("\n          ")}`);
}

export async function benchScale(): Promise<void> {
  const dir = scratchDir("ident-bench-scale-");
  const pg = await startPostgres();
  try {
    // An index of millions is built with the memory a server that holds one would give it; the log kept
    // small: the disk that holds 10M entities has little to spare (allowed 8 GB, the log took them).
    const settings = { maintenance_work_mem: "1GB", max_wal_size: "1GB" };
    await serverSettings(pg, settings);
    console.log(
      `${machine(dir)}; the server's ${Object.entries(settings)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    );
    for (const run of runsAsked()) await scaleRun(run, pg, dir);
  } finally {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
