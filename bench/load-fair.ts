/**
 * `npm run load -- fair` (docs/architecture.md#fair-queues): a crowd of 64 client addresses each
 * keeping 4 requests in flight for 20 s, and a 65th client asking one at a time, timed from a process
 * of its own, beside the same client at rest. Twice: searches of an index of 100,000 entities, then
 * cold lookups (each of a domain not asked before). The limits a minute are raised for the run, so
 * that only what the instance shares (its search queue, its outbound slots and queue, the turns at
 * one address, the lookups it holds) stands between the crowd and the 65th client. The crowd asks
 * again as soon as it is answered, whatever Retry-After says. Goal: none of the 65th client's
 * requests refused, its p95 ≤ 3 × at rest.
 */
import { spawn } from "node:child_process";
import { Agent } from "node:http";
import path from "node:path";
import { openStore } from "ident-resolver/store";
import { scratchDir, endsWithRun } from "../test/helpers/scratch";
import { generateFor } from "./index";
import { counts, get, p95, sleep, startApp, stopApp } from "./load-kit";

type Answer = { status: number; ms: number };

/**
 * One client asking `targets` one at a time (`gapMs` between), from a process of its own so that the
 * crowd this one sends does not delay its clock; each answer's status and time when it is stopped.
 */
export function politeClient(
  port: number,
  targets: readonly string[],
  headers: Record<string, string>,
  gapMs = 25,
): () => Promise<Answer[]> {
  const script = `
    const http = require("node:http");
    const out = [];
    let targets = null;
    let running = true;
    process.on("message", (m) => { if (targets === null) targets = m; else running = false; });
    (async () => {
      while (targets === null) await new Promise((r) => setTimeout(r, 5));
      for (let i = 0; running && i < targets.length; i++) {
        const t0 = performance.now();
        const status = await new Promise((resolve) => {
          const req = http.get({ host: "127.0.0.1", port: ${port}, path: targets[i], headers: ${JSON.stringify(headers)}, agent: false, timeout: 30000 }, (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode));
          });
          req.on("timeout", () => req.destroy());
          req.on("error", () => resolve(0));
        });
        out.push({ status, ms: performance.now() - t0 });
        await new Promise((r) => setTimeout(r, ${gapMs}));
      }
      while (running) await new Promise((r) => setTimeout(r, 25));
      process.send(out, () => process.exit(0));
    })();`;
  const child = endsWithRun(spawn(process.execPath, ["-e", script], { stdio: ["ignore", "ignore", "inherit", "ipc"] }));
  // The targets go by message: thousands of them do not fit in a command line.
  child.send(targets);
  return () =>
    new Promise((resolve) => {
      child.once("message", (answers) => resolve(answers as Answer[]));
      child.send("stop");
    });
}

/** 64 addresses, each with 4 loops asking `target(address, n)` for `ms`; the statuses they met. */
async function crowd(port: number, ms: number, target: (address: number, n: number) => string): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const until = performance.now() + ms;
  const statuses: number[] = [];
  let n = 0;
  await Promise.all(
    Array.from({ length: 64 * 4 }, async (_, k) => {
      const address = Math.floor(k / 4);
      const from = { "x-forwarded-for": `10.92.${address}.1` };
      while (performance.now() < until) statuses.push((await get(port, target(address, n++), from, 30_000, agent)).status);
    }),
  );
  agent.destroy();
  return statuses;
}

/** The 65th client at rest, then amid the crowd; its answers' statuses and p95s. */
async function politeAmidCrowd(port: number, rest: string[], amid: string[], crowdTarget: (address: number, n: number) => string) {
  const polite = { "x-forwarded-for": "10.93.0.1" };
  let stop = politeClient(port, rest, polite);
  await sleep(6000);
  const calm = await stop();
  stop = politeClient(port, amid, polite);
  const statuses = await crowd(port, 20_000, crowdTarget);
  const during = await stop();
  const refused = during.filter((a) => a.status !== 200).length;
  const [restP95, amidP95] = [p95(calm.map((a) => a.ms)), p95(during.map((a) => a.ms))];
  return (
    `the crowd's ${statuses.length} requests: ${counts(statuses)}; the 65th client, one at a time: ${during.length} requests, ` +
    `${refused} refused (goal 0${refused ? `: ${counts(during.map((a) => a.status))}` : ""}), ` +
    `p95 ${amidP95.toFixed(1)} ms vs ${restP95.toFixed(1)} ms at rest over ${calm.length} (${(amidP95 / restP95).toFixed(2)} ×; goal ≤ 3 ×)`
  );
}

/** Raised for the run: only what the instance shares is measured (docs/architecture.md#fair-queues). */
const RAISED = {
  IDENT_TRUSTED_HOPS: "1",
  IDENT_SEARCHES_PER_MIN: "1000000",
  IDENT_STORE_READS_PER_MIN: "1000000",
  IDENT_COLD_LOOKUPS_PER_MIN: "1000000",
  IDENT_ADDRESS_BUDGET_PER_MIN: "1000000",
};

const WORDS = "alice moreau garcia nguyen okafor tanaka kowalski dubois haddad lindqvist rossi ferreira novak jansen lopez".split(" ");
const letters = (n: number, k: number) =>
  Array.from({ length: k }, (_, i) => String.fromCharCode(97 + (Math.floor(n / 26 ** i) % 26))).join("");
/**
 * A search of a common word and a prefix, distinct for each `n` (an instance answers the same search
 * from memory for a while, docs/api.md#search): the crowd's prefixes have two letters, the 65th
 * client's three, so none of its searches is one the crowd made.
 */
const search = (n: number, prefix: number) =>
  `/api/search?q=${encodeURIComponent(`${WORDS[n % WORDS.length]} ${letters(Math.floor(n / WORDS.length), prefix)}`)}`;

/** A publisher for names that exist nowhere, in a process of its own, and the app's environment to reach it. */
export type ColdPublisher = { env: Record<string, string>; suffix: string; stop(): void };

/** The `fair` run: searches at 100,000 entities, then cold lookups, each with a crowd and a 65th client. */
export async function fairRun(toNet: Record<string, string>, coldPublisher: () => Promise<ColdPublisher>): Promise<void> {
  const dataDir = path.join(scratchDir("ident-load-fair-"), "data");
  const store = await openStore({ kind: "embedded", dataDir }, () => undefined);
  await generateFor(store, 100_000);
  await store.close();
  const many = (from: number, n: number, as: (i: number) => string) => Array.from({ length: n }, (_, i) => as(from + i));
  let app = await startApp(3415, { ...toNet, ...RAISED, IDENT_DATA_DIR: dataDir });
  const searches = await politeAmidCrowd(
    app.port,
    many(0, 5000, (n) => search(n, 3)),
    many(5000, 5000, (n) => search(n, 3)),
    (a, n) => search(a * 9973 + n, 2),
  );
  console.log(`fair      searches at 100,000 entities, 64 addresses × 4 at once for 20 s: ${searches}`);
  await stopApp(app);

  // Cold lookups of names that exist nowhere (each a fetch of /ident.json, then of the page, both
  // 404 after 50 ms), all at one address, from a publisher in a process of its own.
  const publisher = await coldPublisher();
  app = await startApp(3416, { ...publisher.env, ...RAISED });
  const named = (prefix: string) => (n: number) => `/api/resolve?q=${prefix}${n}.${publisher.suffix}`;
  const lookups = await politeAmidCrowd(app.port, many(0, 5000, named("rest")), many(0, 5000, named("polite")), (a, n) =>
    named(`crowd${a}-`)(n),
  );
  console.log(`fair      cold lookups, 64 addresses × 4 at once for 20 s, one publisher address: ${lookups}`);
  await stopApp(app);
  publisher.stop();
}
