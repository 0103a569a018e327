/**
 * `npm run load`'s runs against what the app remembers (docs/operating.md), each against a fresh
 * `npm start` with the embedded store, loopback only, bounded in count and time:
 *
 *   engine   a steady lookup load (25 a second for 40 s); the embedded engine's process killed 3 times
 *   disk     the same load on a 192 MB tmpfs (a user and mount namespace of its own, `unshare -rm`),
 *            filled to the last byte 10 s in and freed 20 s later
 *   pages    10,000 distinct entity pages: RSS beside the caches' bounds
 *   search   at 100,000 entities, one client flooding 200-character searches from 64 connections
 *            while another reads a warm lookup; then the same with the per-client limit lifted
 *   junk     10,000 lookups of names with no entity document, then the index's prune 6 and 7 days on
 *   imports  four failed `ident store import`s of 20,000 entities (the last line not JSON) into an empty
 *            store, then four into a store of 20,000 with --merge, on both engines: the store's size
 *            before and after (docs/deploying.md#what-an-import-refuses); then three embedded imports of
 *            100,000 entities stopped part-way by Ctrl-C, and three by SIGKILL: the store's size before,
 *            after each and opened again (docs/deploying.md#moving-the-index); needs no build
 *
 * Results "lost" are lookups answered 200 whose domain the index does not hold afterwards
 * (`/api/entity/{domain}/history` answers 404). Limits that would refuse the load itself (the
 * address's minute: every publisher here is one address) are raised for the run, and said so.
 */
import { execFile, spawn } from "node:child_process";
import { appendFileSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeSync, openSync, closeSync } from "node:fs";
import { Agent } from "node:http";
import path from "node:path";
import { openStore } from "ident-resolver/store";
import { BACKLOG_MAX } from "ident-resolver/store";
import { DEFAULTS } from "ident-resolver";
import type { Site } from "../test/network/server";
import { startPostgres } from "../test/helpers/postgres";
import { endsWithRun, scratchDir } from "../test/helpers/scratch";
import { writeSynthetic } from "./export";
import { generateFor } from "./index";
import { type App, counts, engineRssMb, get, metric, p95, probe, root, rssMb, scrape, sleep, startApp, stopApp } from "./load-kit";
import { median } from "./stats";

const S = "\u00a7";
const STEADY = 2400;
const PAGES = 10_000;
const person = (domain: string, name: string) =>
  JSON.stringify({ network_id: `${S}:entity:${domain}`, entity_type: "person", details: { name, domain } });

/** The publishers these runs look up, under `load.test` (the sample network's certificate covers `*.load.test`). */
export function storeSites(): Record<string, Site> {
  const sites: Record<string, Site> = {};
  for (let i = 0; i < STEADY; i++)
    sites[`steady${i}.load.test`] = { files: { "/ident.json": person(`steady${i}.load.test`, `Steady ${i}`) } };
  for (let i = 0; i < PAGES; i++)
    sites[`page${i}.load.test`] = { files: { "/ident.json": person(`page${i}.load.test`, `Page Person ${i}`) } };
  return sites;
}

/** A client address of its own for every lookup (after IDENT_TRUSTED_HOPS=1): the per-client limits are not what these runs measure. */
const client = (i: number, net: number) => ({ "x-forwarded-for": `10.${net}.${(i >> 8) & 255}.${i & 255}` });

/** Lookups of `domains`, one every `everyMs`, each on a connection of its own, until the list ends; what each answered. */
async function steady(app: App, domains: string[], everyMs: number) {
  const answers: { domain: string; status: number }[] = [];
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < domains.length; i++) {
    const domain = domains[i] as string;
    await sleep(Math.max(0, t0 + i * everyMs - performance.now()));
    pending.push(
      get(app.port, `/api/resolve?q=${domain}`, client(i, 70), 30_000).then(({ status }) => void answers.push({ domain, status })),
    );
  }
  await Promise.all(pending);
  return answers;
}

/** Polls `/readyz` every 100 ms until stopped: each change of its answer, with when it came. */
function readiness(app: App, t0: number) {
  const changes: { at: number; status: number; body: string }[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const seen = await new Promise<{ status: number; body: string }>((resolve) => {
        void fetch(`http://127.0.0.1:${app.port}/readyz`, { signal: AbortSignal.timeout(5000) })
          .then(async (r) => resolve({ status: r.status, body: (await r.text()).trim().slice(0, 80) }))
          .catch(() => resolve({ status: 0, body: "no answer" }));
      });
      const last = changes.at(-1);
      if (!last || last.status !== seen.status || (seen.status !== 200 && last.body !== seen.body))
        changes.push({ at: performance.now() - t0, ...seen });
      await sleep(100);
    }
  })();
  return async () => {
    running = false;
    await done;
    return changes;
  };
}

/** The most results waiting to be recorded (`ident_records_waiting`), sampled every 200 ms until stopped. */
function waiting(app: App) {
  let most = 0;
  const timer = setInterval(() => void scrape(app.port).then((t) => (most = Math.max(most, metric(t, "ident_records_waiting") || 0))), 200);
  return () => (clearInterval(timer), most);
}

/** Waits (≤ 60 s) until nothing waits to be recorded; then how many of `answers`' 200s the index holds, and what was dropped. */
async function recorded(app: App, answers: { domain: string; status: number }[]) {
  for (let i = 0; i < 300; i++) {
    if (metric(await scrape(app.port), "ident_records_waiting") === 0) break;
    await sleep(200);
  }
  const answered = answers.filter((a) => a.status === 200);
  let held = 0;
  for (const a of answered) if ((await get(app.port, `/api/entity/${a.domain}/history`, {}, 10_000)).status === 200) held++;
  const dropped = metric(await scrape(app.port), "ident_records_dropped_total") || 0;
  return { answered: answered.length, held, lost: answered.length - held, dropped };
}

/** The pid of the app's embedded engine (a child process running pglite-engine), or 0. */
function enginePid(pid: number): number {
  for (const task of readdirSync(`/proc/${pid}/task`))
    for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean))
      if (readFileSync(`/proc/${child}/cmdline`, "utf8").includes("pglite-engine")) return Number(child);
  return 0;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const said = (changes: { at: number; status: number; body: string }[]) =>
  changes.map((c) => `${seconds(c.at)} ${c.status}${c.status === 200 ? "" : ` "${c.body}"`}`).join(" → ");
/** The store's own warnings while its engine is killed or its disk full: what the runs print says it. */
const quiet = () => undefined;
const raised = { IDENT_TRUSTED_HOPS: "1", IDENT_ADDRESS_BUDGET_PER_MIN: "1000000" };

export type StoreRunContext = { toNet: Record<string, string>; wanted: (name: string) => boolean };

export async function storeRuns({ toNet, wanted }: StoreRunContext): Promise<void> {
  const note = "(the address's minute raised: every publisher here is one address)";

  if (wanted("engine")) {
    const app = await startApp(3410, { ...toNet, ...raised }, quiet);
    const t0 = performance.now();
    const stopReady = readiness(app, t0);
    const stopWaiting = waiting(app);
    const load = steady(
      app,
      Array.from({ length: 1000 }, (_, i) => `steady${i}.load.test`),
      40,
    );
    const kills: { at: number; back: number }[] = [];
    for (const at of [10_000, 20_000, 30_000]) {
      await sleep(Math.max(0, t0 + at - performance.now()));
      const pid = enginePid(app.pid);
      if (!pid) continue;
      process.kill(pid, "SIGKILL");
      const killed = performance.now();
      // Back: a new engine answers, and /readyz is 200 again.
      let back = NaN;
      for (let i = 0; i < 300; i++) {
        await sleep(50);
        const now = enginePid(app.pid);
        if (now && now !== pid && (await get(app.port, "/readyz", {}, 2000)).status === 200) {
          back = performance.now() - killed;
          break;
        }
      }
      kills.push({ at: killed - t0, back });
    }
    const answers = await load;
    const most = stopWaiting();
    const r = await recorded(app, answers);
    const changes = await stopReady();
    console.log(
      `engine    25 lookups a second for 40 s ${note}, the engine killed at ${kills.map((k) => seconds(k.at)).join(", ")}: ` +
        `back after ${kills.map((k) => seconds(k.back)).join(", ")} (goal ≤ 5 s); lookups ${counts(answers.map((a) => a.status))}; ` +
        `${r.held} of the ${r.answered} answered are in the index afterwards, ${r.lost} lost (goal 0 below the bound of ${BACKLOG_MAX} waiting), ` +
        `${r.dropped} dropped, at most ${most} waiting at once; /readyz: ${said(changes)}`,
    );
    await stopApp(app);
  }

  if (wanted("disk")) {
    // The app, its engine and its data in a namespace of their own, on a tmpfs nothing else can see
    // except through the app's /proc/{pid}/root.
    const root = scratchDir("ident-load-disk-");
    const launcher = ["unshare", "-rm", "sh", "-c", 'mount -t tmpfs -o size=192m tmpfs "$0" && exec "$@"', root];
    const app = await startApp(3411, { ...toNet, ...raised, IDENT_DATA_DIR: path.join(root, "data") }, quiet, launcher);
    const filler = `/proc/${app.pid}/root${root}/filler`;
    const t0 = performance.now();
    const stopReady = readiness(app, t0);
    const stopWaiting = waiting(app);
    const load = steady(
      app,
      Array.from({ length: 1200 }, (_, i) => `steady${1000 + i}.load.test`),
      40,
    );
    await sleep(10_000);
    let filled = 0;
    const fd = openSync(filler, "w");
    try {
      for (const chunk = Buffer.alloc(1024 * 1024); ; filled += writeSync(fd, chunk));
    } catch {
      // full: the last byte written
    } finally {
      closeSync(fd);
    }
    const fullAt = performance.now() - t0;
    await sleep(20_000);
    unlinkSync(filler);
    const freedAt = performance.now() - t0;
    const answers = await load;
    const most = stopWaiting();
    const r = await recorded(app, answers);
    const changes = await stopReady();
    console.log(
      `disk      25 lookups a second for 48 s ${note}, a 192 MB tmpfs filled at ${seconds(fullAt)} (${(filled / 1048576).toFixed(0)} MB more) and freed at ${seconds(freedAt)}: ` +
        `lookups ${counts(answers.map((a) => a.status))}; ${r.held} of the ${r.answered} answered are in the index afterwards, ${r.lost} lost (goal 0 below the bound of ${BACKLOG_MAX} waiting), ` +
        `${r.dropped} dropped, at most ${most} waiting at once; /readyz: ${said(changes)}`,
    );
    await stopApp(app);
  }

  if (wanted("pages")) {
    const app = await startApp(3412, { ...toNet, ...raised });
    await sleep(2000);
    const idle = { app: rssMb(app.pid), engine: engineRssMb(app.pid) };
    const peak = { ...idle };
    const sampler = setInterval(() => {
      peak.app = Math.max(peak.app, rssMb(app.pid));
      peak.engine = Math.max(peak.engine, engineRssMb(app.pid));
    }, 100);
    const t0 = performance.now();
    const statuses: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = next++; i < PAGES; i = next++)
          statuses.push((await get(app.port, `/entity/page${i}.load.test`, client(i, 80), 30_000)).status);
      }),
    );
    const took = performance.now() - t0;
    // One entity page asked with 2,000 query strings the page does not read (docs/decisions.md#page-cache).
    const beforeQueries = rssMb(app.pid);
    const queried: number[] = [];
    for (let i = 0; i < 2000; i++) queried.push((await get(app.port, `/entity/page0.load.test?x=${i}`, client(i, 80), 30_000)).status);
    const afterQueries = rssMb(app.pid);
    await sleep(2000);
    clearInterval(sampler);
    const after = { app: rssMb(app.pid), engine: engineRssMb(app.pid) };
    // What stays once V8's memory reducer has run (8 s after the load, then again).
    await sleep(30_000);
    const settled = rssMb(app.pid);
    const bounds = 32 + DEFAULTS.cacheBytes / 1048576;
    console.log(
      `pages     ${PAGES.toLocaleString("en-US")} distinct entity pages, 16 at a time, in ${seconds(took)} ${note}: ${counts(statuses)}; ` +
        `app RSS idle ${idle.app.toFixed(0)} MB → peak ${peak.app.toFixed(0)} MB, ${after.app.toFixed(0)} MB after, ${settled.toFixed(0)} MB 30 s later ` +
        `(+${(peak.app - idle.app).toFixed(0)} MB at peak; goal ≤ the caches' bounds ${bounds} MB (pages 32, documents ${DEFAULTS.cacheBytes / 1048576}) + 32 MB = +${bounds + 32} MB); ` +
        `engine ${idle.engine.toFixed(0)} → ${peak.engine.toFixed(0)} MB; ` +
        `then 2,000 unused query strings on one entity page: ${counts(queried)}, RSS ${beforeQueries.toFixed(0)} → ${afterQueries.toFixed(0)} MB ` +
        `(+${(afterQueries - beforeQueries).toFixed(0)} MB; goal ≤ +32 MB)`,
    );
    await stopApp(app);
  }

  if (wanted("search")) {
    const dataDir = path.join(scratchDir("ident-load-search-"), "data");
    const g0 = performance.now();
    const store = await openStore({ kind: "embedded", dataDir }, () => undefined);
    await generateFor(store, 100_000);
    await store.close();
    const generated = performance.now() - g0;
    const words = "alice moreau garcia nguyen okafor tanaka kowalski dubois haddad lindqvist rossi ferreira novak jansen lopez ";
    const long = encodeURIComponent(words.repeat(3).slice(0, 200));
    const reader = { "x-forwarded-for": "10.90.0.1" };
    const warm = "/api/resolve?q=alice.example";
    const flood = async (limit: Record<string, string>) => {
      const app = await startApp(3413, { ...toNet, IDENT_TRUSTED_HOPS: "1", IDENT_DATA_DIR: dataDir, ...limit });
      await get(app.port, warm, reader, 30_000);
      let stop = probe(app.port, warm, reader);
      await sleep(8000);
      const calm = await stop();
      stop = probe(app.port, warm, reader);
      const agent = new Agent({ keepAlive: true, maxSockets: 64 });
      const until = performance.now() + 20_000;
      const statuses: number[] = [];
      const searchMs: number[] = [];
      await Promise.all(
        Array.from({ length: 64 }, async (_, c) => {
          for (let n = 0; performance.now() < until && n < 100_000; n++) {
            const target = (c + n) % 2 ? `/api/search?q=${long}` : `/search?q=${long}`;
            const a = await get(app.port, target, { "x-forwarded-for": "10.91.0.1" }, 30_000, agent);
            statuses.push(a.status);
            if (a.status === 200) searchMs.push(a.ms);
          }
        }),
      );
      const during = await stop();
      agent.destroy();
      await stopApp(app);
      return { calm, during, statuses, searchMs };
    };
    // 64 addresses, 4 searches at once each, each under its own minute; another client's own searches timed.
    const crowd = async () => {
      const app = await startApp(3413, {
        ...toNet,
        IDENT_TRUSTED_HOPS: "1",
        IDENT_DATA_DIR: dataDir,
        IDENT_SEARCHES_PER_MIN: "1000000",
        IDENT_STORE_READS_PER_MIN: "1000000",
      });
      const mine = `/api/search?q=${encodeURIComponent("moreau garcia")}`;
      const other = { "x-forwarded-for": "10.93.0.1" };
      // Beside it, a third client's warm lookup (no search, no engine): what the flood of requests
      // itself costs the process and the machine, whatever the searches do.
      const looker = { "x-forwarded-for": "10.94.0.1" };
      await get(app.port, mine, other, 30_000);
      await get(app.port, warm, looker, 30_000);
      let stop = probe(app.port, mine, other);
      let stopLookup = probe(app.port, warm, looker);
      await sleep(8000);
      const calm = await stop();
      const lookupCalm = await stopLookup();
      stop = probe(app.port, mine, other);
      stopLookup = probe(app.port, warm, looker);
      const agent = new Agent({ keepAlive: true, maxSockets: 256 });
      const until = performance.now() + 20_000;
      const statuses: number[] = [];
      await Promise.all(
        Array.from({ length: 64 * 4 }, async (_, k) => {
          const from = { "x-forwarded-for": `10.92.${Math.floor(k / 4)}.1` };
          for (let n = 0; performance.now() < until && n < 100_000; n++) {
            const text = encodeURIComponent(`${words.split(" ")[(k + n) % 14]} ${n % 97}`);
            statuses.push((await get(app.port, `/api/search?q=${text}`, from, 30_000, agent)).status);
          }
        }),
      );
      const during = await stop();
      const lookupDuring = await stopLookup();
      agent.destroy();
      await stopApp(app);
      return { calm, during, statuses, lookup: { calm: lookupCalm, during: lookupDuring } };
    };
    const many = await crowd();
    console.log(
      `search    64 addresses × 4 searches at once for 20 s, each under its own minute: ${counts(many.statuses)}; ` +
        `another client's own search p95 ${p95(many.during).toFixed(1)} ms over ${many.during.length} vs ${p95(many.calm).toFixed(1)} ms at rest ` +
        `(${(p95(many.during) / p95(many.calm)).toFixed(2)} ×; goal ≤ 3 ×); a third client's warm lookup meanwhile ` +
        `p95 ${p95(many.lookup.during).toFixed(1)} ms vs ${p95(many.lookup.calm).toFixed(1)} ms (${(p95(many.lookup.during) / p95(many.lookup.calm)).toFixed(2)} ×)`,
    );
    const one = await flood({});
    const lifted = await flood({ IDENT_SEARCHES_PER_MIN: "1000000", IDENT_STORE_READS_PER_MIN: "1000000" });
    const ratio = (f: { calm: number[]; during: number[] }) =>
      `p95 ${p95(f.during).toFixed(1)} ms vs ${p95(f.calm).toFixed(1)} ms without it (${(p95(f.during) / p95(f.calm)).toFixed(2)} ×)`;
    console.log(
      `search    100,000 entities (generated in ${seconds(generated)}); one client, 64 connections, 200-character searches for 20 s: ` +
        `${counts(one.statuses)}; another client's warm lookup ${ratio(one)} (goal ≤ 3 ×); ` +
        `with the per-client limit lifted (as from many addresses): ${counts(lifted.statuses)}, a search's median ${median(lifted.searchMs).toFixed(0)} ms, p95 ${p95(lifted.searchMs).toFixed(0)} ms; the warm lookup ${ratio(lifted)}`,
    );
  }
}

/** The `junk` run: its own publisher for names with no document, then the prune with a clock this run sets. */
export async function junkRun(env: Record<string, string>, suffix: string): Promise<void> {
  const dataDir = path.join(scratchDir("ident-load-junk-"), "data");
  const app = await startApp(3414, { ...env, ...raised, IDENT_DATA_DIR: dataDir });
  const t0 = performance.now();
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let i = next++; i < 10_000; i = next++)
        statuses.push((await get(app.port, `/api/resolve?q=j${i}.${suffix}`, client(i, 85), 30_000)).status);
    }),
  );
  const took = performance.now() - t0;
  await stopApp(app);
  const store = await openStore({ kind: "embedded", dataDir }, () => undefined);
  const left = async () => {
    const [row] = await store.db.query<{ e: number; q: number }>(
      `SELECT (SELECT count(*)::int FROM entities WHERE domain LIKE $1) AS e, (SELECT count(*)::int FROM crawl_queue WHERE domain LIKE $1) AS q`,
      [`%.${suffix}`],
    );
    return `${row?.e} rows and ${row?.q} queue jobs`;
  };
  const day = 24 * 3600 * 1000;
  const before = await left();
  await store.prune(new Date(Date.now() + 6 * day));
  const six = await left();
  await store.prune(new Date(Date.now() + 7 * day + 3600 * 1000));
  const seven = await left();
  await store.close();
  console.log(
    `junk      10,000 lookups of names with no entity document, 64 at a time, in ${seconds(took)} (the address's minute raised): ${counts(statuses)}; ` +
      `the index then held ${before}; 6 days on: ${six}; 7 days and 1 h on: ${seven} (goal 0)`,
  );
}

/** The bytes of every file under `dir` (one an engine removes meanwhile counts nothing). */
function folderBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce(
    (sum, e) =>
      sum +
      (e.isDirectory() ? folderBytes(path.join(dir, e.name)) : (statSync(path.join(dir, e.name), { throwIfNoEntry: false })?.size ?? 0)),
    0,
  );
}

/** `ident store …` as an operator runs it; its last line. */
const identStore = (args: string[], env: Record<string, string>) =>
  new Promise<string>((resolve) =>
    execFile(
      process.execPath,
      [path.join(root, "bin", "ident.js"), "store", ...args],
      { env: Object.assign({}, process.env, { IDENT_CRAWL: "0", IDENT_LOG_LEVEL: "warn" }, env), maxBuffer: 1 << 20 },
      (_err, _stdout, stderr) => resolve(stderr.trim().split("\n").at(-1) ?? ""),
    ),
  );

/**
 * `ident store import file` into the embedded store in `dataDir`, in a process group of its own as a
 * terminal starts it, sent `signal` to the group (a terminal's Ctrl-C is SIGINT to it) once it has
 * written `grown` bytes (past the folder's smallest size meanwhile: its opening may first remove what
 * a killed import left); resolves once every process of the group has ended, with whether the signal
 * came before the import's end.
 */
async function importStopped(file: string, dataDir: string, signal: NodeJS.Signals, grown: number): Promise<boolean> {
  const child = endsWithRun(
    spawn(process.execPath, [path.join(root, "bin", "ident.js"), "store", "import", file], {
      detached: true,
      env: Object.assign({}, process.env, { IDENT_CRAWL: "0", IDENT_LOG_LEVEL: "warn", IDENT_DATA_DIR: dataDir }),
      stdio: "ignore",
    }),
    "SIGKILL",
  );
  let ended = false;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      ended = true;
      resolve();
    }),
  );
  for (let low = Infinity; ; await sleep(100)) {
    const now = folderBytes(dataDir);
    low = Math.min(low, now);
    if (ended || now >= low + grown) break;
  }
  const stopped = !ended;
  if (stopped) process.kill(-child.pid!, signal);
  await exited;
  // Its engine, in the same group, ends after it.
  for (let alive = true; alive; await sleep(100)) {
    try {
      process.kill(-child.pid!, 0);
    } catch {
      alive = false;
    }
  }
  return stopped;
}

/**
 * Three embedded imports of `file` into a new store in `dataDir`, each stopped by `signal` once it has
 * written `grown` bytes (docs/deploying.md#moving-the-index): the store's size before, after each, and
 * opened again, in MB; how many were stopped before their end, and the entities the store holds afterwards.
 */
async function stoppedImports(file: string, dataDir: string, signal: NodeJS.Signals, grown: number) {
  await (await openStore({ kind: "embedded", dataDir }, () => undefined)).close();
  const before = folderBytes(dataDir);
  const mb: number[] = [before / 1048576];
  let stopped = 0;
  for (let i = 0; i < 3; i++) {
    if (await importStopped(file, dataDir, signal, grown)) stopped++;
    mb.push(folderBytes(dataDir) / 1048576);
  }
  const store = await openStore({ kind: "embedded", dataDir }, () => undefined);
  const [held] = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM entities");
  await store.close();
  mb.push(folderBytes(dataDir) / 1048576);
  return { mb, stopped, entities: held?.n ?? NaN };
}

/**
 * The `imports` run (docs/deploying.md#what-an-import-refuses): a failed import leaves the store its
 * size, into an empty store and into one that holds entities (--merge), on the embedded store and on
 * PostgreSQL (its database's size; the server's log is the server's).
 */
export async function importsRun(): Promise<void> {
  const N = 20_000;
  const dir = scratchDir("ident-load-imports-");
  const pg = await startPostgres();
  try {
    const good = path.join(dir, "good.ndjson");
    const bad = path.join(dir, "bad.ndjson");
    await writeSynthetic(good, N);
    await writeSynthetic(bad, N);
    appendFileSync(bad, "{not json\n");
    const figures: string[] = [];
    let said = "";
    for (const engine of ["embedded", "PostgreSQL"] as const) {
      for (const merge of [false, true]) {
        const where = engine === "embedded" ? { kind: "embedded" as const, dataDir: path.join(dir, `data-${String(merge)}`) } : null;
        const url = where ? "" : await pg.database(`imports_${String(merge)}`);
        const env: Record<string, string> = where ? { IDENT_DATA_DIR: where.dataDir } : { IDENT_DATABASE_URL: url };
        // A new store (migrated), or one that holds the 20,000 entities.
        if (merge) await identStore(["import", good], env);
        else await (await openStore(where ?? { kind: "server", url }, () => undefined)).close();
        const size = async () => {
          if (where) return folderBytes(where.dataDir);
          const store = await openStore({ kind: "server", url }, () => undefined);
          const [row] = await store.db.query<{ n: string }>("SELECT pg_database_size(current_database()) AS n");
          await store.close();
          return Number(row?.n);
        };
        const before = await size();
        for (let i = 0; i < 4; i++) said = await identStore(["import", bad, ...(merge ? ["--merge"] : [])], env);
        const after = await size();
        const mb = (b: number) => (b / 1048576).toFixed(1);
        figures.push(
          `${engine}${merge ? ` holding ${N.toLocaleString("en-US")}, --merge` : ", empty"}: ${mb(before)} → ${mb(after)} MB (${after >= before ? "+" : ""}${(((after - before) / before) * 100).toFixed(1)} %)`,
        );
      }
    }
    console.log(
      `imports   Four failed imports of ${N.toLocaleString("en-US")} entities (the last line not JSON; each said "${said.replace(dir, "…")}"): ` +
        `the store's size ${figures.join("; ")} (goal: the store's size + ≤ 25 %)`,
    );
    await stoppedRun(dir);
  } finally {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The `imports` run's stopped imports: 100,000 entities, each stopped once it has written 150 MB (about half of it). */
async function stoppedRun(dir: string): Promise<void> {
  const M = 100_000;
  const file = path.join(dir, "100k.ndjson");
  await writeSynthetic(file, M);
  const grown = 150 * 1048576;
  const lines: string[] = [];
  for (const signal of ["SIGINT", "SIGKILL"] as const) {
    const { mb, stopped, entities } = await stoppedImports(file, path.join(dir, `data-${signal}`), signal, grown);
    const [before = 0, ...rest] = mb;
    const opened = rest.pop() ?? 0;
    const how = signal === "SIGINT" ? "Ctrl-C (SIGINT to the command's group)" : "SIGKILL to the command's group";
    const growth = `${opened >= before ? "+" : ""}${(((opened - before) / before) * 100).toFixed(1)} %`;
    lines.push(
      `by ${how} (${stopped} of 3 stopped before their end): ${before.toFixed(1)} → ${rest.map((m) => m.toFixed(1)).join(", ")} MB, ` +
        `${opened.toFixed(1)} MB opened again (${growth}), holding ${entities} entities`,
    );
  }
  rmSync(file, { force: true });
  console.log(
    `imports   Three embedded imports of ${M.toLocaleString("en-US")} entities, each stopped once it had written 150 MB, ` +
      `the store's size before, after each and opened again: ${lines.join("; ")} (goal: ≤ +25 % after three; each import's own opening ` +
      `removes what a killed one left)`,
  );
}
