/**
 * Search at a million entities (docs/decisions.md#search-at-size), for `npm run bench -- scale`
 * (`BENCH_ONLY=scale`): a synthetic index (bench/scale-data.ts: skewed names, 2 claims each) built
 * through `ident store import` on a PostgreSQL server started here, at 100k and at 1M entities
 * (`BENCH_SCALE_MILLION=0` skips 1M), and at 100k on the embedded store (`BENCH_SCALE_EMBEDDED=0` skips it). For each, the built app is
 * started on it and prints:
 *
 *   search    p50 / p95 / max of each kind through /api/search over HTTP, each request a spelling the
 *             app's cache has not seen (goal p95 < 20 ms at 100k, < 50 ms at 1M and embedded at 100k)
 *   sitemap   every sitemap of /sitemap.xml read through: time, and the app's peak RSS over its idle
 *             RSS (goal ≤ 64 MB)
 *   jobs      re-verification jobs claimed a second by 4 processes at once, and how many were claimed
 *             twice (goal ≥ 1,000/s, 0)
 *   size      the store's bytes per 1,000 entities
 *   home      the home page's queries and the counts alone, from the store (goal p95 < 10 ms; PostgreSQL)
 *   changes   pages of /api/changes at the start, middle and end of the changes (goal p95 < 10 ms)
 */
import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { once } from "node:events";
import { request } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ident, rssMb, writeSynthetic } from "./export";
import { p95, startApp, stopApp, type App } from "./load-kit";
import { SKEWED, word } from "./scale-data";
import { median } from "./stats";
import { startPostgres } from "../test/helpers/postgres";
import { endsWithRun, scratchDir } from "../test/helpers/scratch";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REQUESTS = 60;
const CLAIMERS = 4;
const CLAIM_SECONDS = 5;

/** Every spelling of `w` by case (its first 2^letters), so that each request is new to the app's cache. */
function casings(w: string, n: number): string[] {
  const out: string[] = [];
  for (let mask = 0; out.length < n && mask < 1 << Math.min(w.length, 12); mask++)
    out.push([...w].map((c, i) => ((mask >> i) & 1 ? c.toUpperCase() : c)).join(""));
  return out;
}

/** The searches of each kind, {@link REQUESTS} each, every one a text the app has not been asked (docs/decisions.md#search-at-size). */
function searches(): Record<string, string[]> {
  const spread = (make: (i: number) => string[]) => Array.from({ length: REQUESTS }, (_, i) => make(i)[0] ?? "");
  return {
    // The two commonest words, in about 1 name in 6 and 1 in 11.
    "common word": [...casings(word(0), REQUESTS / 2), ...casings(word(1), REQUESTS / 2)],
    "rare word": spread((i) => [word(10_000 + i * 150)]),
    // Pairs of common words, each pair once.
    "two words": spread((i) => [`${word(i % 6)} ${word(6 + Math.floor(i / 6))}`]),
    // A letter of a common word replaced by one no word has: nothing matches, so typos are looked
    // for. 30 words, each in two spellings by case.
    typo: spread((i) => {
      const w = word(i % 30);
      return casings(`${w.slice(0, 2)}x${w.slice(3)}`, 2).slice(Math.floor(i / 30));
    }),
    // The first three letters of common words, each in 8 spellings by case.
    prefix: spread((i) => casings(word(i % 8).slice(0, 3), 8).slice(Math.floor(i / 8) % 8)),
  };
}

/** A GET's status and time, its body read and dropped. */
function timed(port: number, target: string): Promise<{ status: number; ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request({ host: "127.0.0.1", port, path: target, agent: false }, (res) => {
      let bytes = 0;
      res.on("data", (c: Buffer) => (bytes += c.length));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, bytes }));
    });
    req.on("error", reject);
    req.end();
  });
}

const ms = (x: number) => (x < 10 ? x.toFixed(1) : x.toFixed(0));

async function searchFigures(app: App): Promise<string[]> {
  // At rest first: the app's connections to the store opened and each kind's statements planned
  // once, with texts the measured ones do not repeat.
  for (const text of ["zzwarm", `${word(40)} ${word(41)}`, `${word(42).slice(0, 2)}x${word(42).slice(3)}`, word(19_999), "zzw"])
    await timed(app.port, `/api/search?q=${encodeURIComponent(text)}`);
  const lines: string[] = [];
  for (const [kind, texts] of Object.entries(searches())) {
    const times: number[] = [];
    let hits = 0;
    let bad = 0;
    for (const text of texts) {
      const r = await timed(app.port, `/api/search?q=${encodeURIComponent(text)}`);
      if (r.status !== 200) bad++;
      else if (r.bytes > 200) hits++;
      times.push(r.ms);
    }
    lines.push(
      `${kind.padEnd(12)} p50 ${ms(median(times))} / p95 ${ms(p95(times))} / max ${ms(Math.max(...times))} ms` +
        ` (${texts.length} searches, ${hits} with hits${bad > 0 ? `, ${bad} NOT 200` : ""})`,
    );
  }
  return lines;
}

/** Every sitemap read through, one after another; the app's RSS sampled every 50 ms. */
async function sitemapFigures(app: App): Promise<string> {
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
  return `sitemap      ${maps.length} sitemaps, ${(bytes / 1024 / 1024).toFixed(0)} MB read in ${s.toFixed(1)} s; app RSS idle ${idle.toFixed(0)} MB, peak ${peak.toFixed(0)} MB (+${(peak - idle).toFixed(0)} MB, goal ≤ +64)`;
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

async function sizeOf(env: Record<string, string>, n: number): Promise<string> {
  let bytes: number;
  if (env.IDENT_DATABASE_URL) {
    const { default: pg } = await import("pg");
    const client = new pg.Client(env.IDENT_DATABASE_URL);
    await client.connect();
    const { rows } = await client.query<{ n: string }>("SELECT pg_database_size(current_database()) AS n");
    await client.end();
    bytes = Number(rows[0]?.n);
  } else bytes = Number(execFileSync("du", ["-sb", env.IDENT_DATA_DIR ?? ""], { encoding: "utf8" }).split("\t")[0]);
  return `size         ${(bytes / 1024 / 1024).toFixed(0)} MB: ${(((bytes / n) * 1000) / 1024).toFixed(0)} KB per 1,000 entities`;
}

export async function benchScale(): Promise<void> {
  const dir = scratchDir("ident-bench-scale-");
  const pg = await startPostgres();
  try {
    const runs: { label: string; n: number; env: () => Promise<Record<string, string>> }[] = [
      { label: "PostgreSQL", n: 100_000, env: async () => ({ IDENT_DATABASE_URL: await pg.database("scale_100k") }) },
    ];
    if (process.env.BENCH_SCALE_EMBEDDED !== "0")
      runs.push({ label: "embedded", n: 100_000, env: async () => ({ IDENT_DATA_DIR: path.join(dir, "embedded") }) });
    if (process.env.BENCH_SCALE_MILLION !== "0")
      runs.push({ label: "PostgreSQL", n: 1_000_000, env: async () => ({ IDENT_DATABASE_URL: await pg.database("scale_1m") }) });
    for (const run of runs) {
      const file = path.join(dir, `scale-${run.n}.ndjson`);
      await writeSynthetic(file, run.n, SKEWED);
      const env = await run.env();
      const into = await ident(["store", "import", file], env);
      rmSync(file, { force: true });
      const lines = [`import       ${into.s.toFixed(0)} s (${Math.round(run.n / into.s).toLocaleString("en-US")} entities/s)`];
      // The embedded store is one process's: a fleet's instances share a server.
      if (env.IDENT_DATABASE_URL) lines.push(await jobFigures(env));
      const app = await startApp(3290, Object.assign({ IDENT_SEARCHES_PER_MIN: "1000000", IDENT_STORE_READS_PER_MIN: "1000000" }, env));
      try {
        lines.push(...(await searchFigures(app)));
        lines.push(await sitemapFigures(app));
        lines.push(...(await overviewFigures(app, env)));
      } finally {
        await stopApp(app);
      }
      lines.push(await sizeOf(env, run.n));
      console.log(`scale     ${run.label}, ${run.n.toLocaleString("en-US")} entities (one run)\n          ${lines.join("\n          ")}`);
    }
  } finally {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
