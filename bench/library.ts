/**
 * The package's figures (`npm run bench`, docs/library.md#figures): the tarball installed into a
 * project of its own, then
 * - the time `import` takes in a fresh Node process, for the Node entry and for the core (goal ≤ 150 ms);
 * - a cold `resolve()` of a 20-claim entity through the package ÷ the same through `/api/resolve` of
 *   the running app on the same sample network, same run (goal ≤ 1.05 ×), and ÷ a bare client
 *   fetching the same documents (goal ≤ 1.1 ×).
 * Each lookup is of an entity fetched once (its claims too), so every one is cold.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { prepared } from "../scripts/prepare-package.js";
import { get, startApp, stopApp } from "./load-kit";
import { median } from "./stats";

/** Runs of each figure. */
const IMPORT_RUNS = 11;

/** What the child process prints: each lookup's time, and how many of its claims verified. */
type Timed = { ms: number; verified: number }[];

/** In the consumer's folder: each domain resolved cold by a new resolver, as an installer would write it. */
const RESOLVE_SCRIPT = `
import { createResolver } from "ident-resolver/node";
const [warmup, ...domains] = process.argv.slice(2);
await createResolver().resolve(warmup);
const out = [];
for (const domain of domains) {
  const resolver = createResolver();
  const t0 = performance.now();
  const record = await resolver.resolve(domain);
  const ms = performance.now() - t0;
  if ("error" in record) throw new Error(record.error.message);
  const [entity] = record.results;
  out.push({ ms, verified: [...entity.properties, ...entity.credentials].filter((c) => c.verified).length });
}
process.stdout.write(JSON.stringify(out));
`;

/** The median time of `import(specifier)` in a fresh Node process, in ms. */
function importMs(consumer: string, specifier: string): number {
  const code = `const t0 = performance.now(); await import(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t0));`;
  const times = Array.from({ length: IMPORT_RUNS }, () =>
    Number(execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: consumer, encoding: "utf8" })),
  );
  return median(times);
}

/** Cold lookups of `domains` through /api/resolve of the running app, one after another: each one's time in ms. */
async function throughTheApi(env: Record<string, string>, domains: string[]): Promise<number[]> {
  const port = 3900 + (process.pid % 90);
  const app = await startApp(port, env);
  try {
    const times: number[] = [];
    for (const domain of domains) {
      const answer = await get(port, `/api/resolve?q=${domain}`, {}, 30_000);
      if (answer.status !== 200) throw new Error(`library: /api/resolve?q=${domain} answered ${answer.status}`);
      times.push(answer.ms);
    }
    return times;
  } finally {
    await stopApp(app);
  }
}

/** The package's figures; `bareFanMs` is the bare client's median for a 20-claim entity on the same network. */
export async function benchLibrary(
  env: Record<string, string>,
  domains: { library: string[]; api: string[] },
  bareFanMs: number,
): Promise<void> {
  // The tarball, installed before the bench entered its loopback-only namespace (scripts/prepare-package.js).
  const { consumer } = prepared();
  writeFileSync(path.join(consumer, "resolve.mjs"), RESOLVE_SCRIPT);
  const node = importMs(consumer, "ident-resolver/node");
  const core = importMs(consumer, "ident-resolver");
  console.log(
    `library   import ident-resolver/node ${node.toFixed(0)} ms, ident-resolver ${core.toFixed(0)} ms in a fresh Node process (goal ≤ 150 ms; medians of ${IMPORT_RUNS})`,
  );
  const run = spawnSync(process.execPath, ["resolve.mjs", "fan.bench", ...domains.library], {
    cwd: consumer,
    env: { NODE_ENV: "production", PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
    timeout: 120_000,
  });
  if (run.status !== 0) throw new Error(`library: ${run.stderr}`);
  const library = JSON.parse(run.stdout) as Timed;
  if (library.some((l) => l.verified !== 20)) throw new Error(`library: not every claim verified (${library.map((l) => l.verified)})`);
  const lib = median(library.map((l) => l.ms));
  const viaApi = median(await throughTheApi(env, domains.api));
  console.log(
    `library   cold resolve() of a 20-claim entity ${lib.toFixed(0)} ms ÷ /api/resolve ${viaApi.toFixed(0)} ms = ${(lib / viaApi).toFixed(2)} × (goal ≤ 1.05 ×); ` +
      `÷ a bare client's ${bareFanMs.toFixed(0)} ms = ${(lib / bareFanMs).toFixed(2)} × (goal ≤ 1.1 ×); medians of ${library.length} each, same network`,
  );
}
