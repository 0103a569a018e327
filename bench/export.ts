/**
 * Moving the index (docs/deploying.md#moving-the-index), for `npm run bench` (`BENCH_ONLY=export`):
 * `ident store import` and `ident store export` as an operator runs them, on a synthetic index of
 * 100,000 entities, into and out of the embedded store and a PostgreSQL server started here; then an
 * import of 1,000,000 entities into PostgreSQL (`BENCH_EXPORT_MILLION=0` skips it). Printed: entities
 * a second (goals: export ≥ 20,000/s, import ≥ 10,000/s at 100k) and the peak RSS of the command's
 * process, and of its embedded engine's, sampled every 100 ms: memory that does not grow with the index.
 */
import { spawn } from "node:child_process";
import { createWriteStream, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { once } from "node:events";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { EXPORT_SCHEMA, type ExportEntity, type ExportHeader, type ExportJob } from "ident-resolver/store";
import { startPostgres } from "../test/helpers/postgres";
import { endsWithRun, scratchDir } from "../test/helpers/scratch";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(root, "bin", "ident.js");
const WORDS = [
  "alice",
  "moreau",
  "studio",
  "north",
  "guild",
  "makers",
  "river",
  "stone",
  "bjørn",
  "zoë",
  "design",
  "press",
  "law",
  "garden",
];

/** What the synthetic entity `i` is called and says of itself. */
export type Shape = { name: (i: number) => string; description: (i: number) => string };

const smallName = (i: number) => `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} ${i}`;
const SMALL_WORDS: Shape = { name: smallName, description: (i) => `The site of ${smallName(i)}.` };

/** The synthetic index's domain of entity `i`: made as it is written, so that 10 million are never held at once. */
export const domainOf = (i: number) => `e${String(i).padStart(7, "0")}.example`;

/** A synthetic export of `n` entities (2 claims and 3 changes each, in positions 1 to 3n; a queued re-check each), written to `file`. */
export async function writeSynthetic(file: string, n: number, shape: Shape = SMALL_WORDS): Promise<void> {
  const out = createWriteStream(file);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, "drain");
  };
  const t = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();
  const header: ExportHeader = {
    schema: EXPORT_SCHEMA,
    counts: { entities: n, claims: 2 * n, changes: 3 * n, jobs: n },
    last_position: 3 * n,
  };
  await write(`${JSON.stringify(header)}\n`);
  let chunk = "";
  for (let i = 0; i < n; i++) {
    const d = domainOf(i);
    const name = shape.name(i);
    const description = shape.description(i);
    const claim = (kind: "properties" | "credentials", id: string, label: string, verified: boolean): ExportEntity["claims"][number] => ({
      kind,
      claim_key: id.toLowerCase(),
      id,
      label,
      issuer: kind === "credentials" ? "guild.example" : null,
      issuer_name: kind === "credentials" ? "The Guild" : null,
      present: true,
      verified,
      reason: verified ? null : "not_listed",
      stale_reason: null,
      stale_message: null,
      first_seen_at: t(i),
      last_checked_at: t(i + 3600),
      last_verified_at: verified ? t(i + 3600) : null,
      verified_since: verified ? t(i) : null,
      failing_since: verified ? null : t(i),
    });
    const line: ExportEntity = {
      entity: {
        domain: d,
        status: "accepted",
        network_id: `§:entity:${d}`,
        entity_type: i % 5 === 0 ? "organization" : "person",
        details: { name, description },
        problems: [],
        verified: 1 + (i % 2),
        unverified: 1 - (i % 2),
        first_seen_at: t(i),
        last_checked_at: t(i + 3600),
        name,
        description,
        ever_accepted: true,
        failed_checks: 0,
      },
      claims: [
        claim("credentials", `@e${i}@guild.example/members`, "Member", i % 2 === 1),
        claim("properties", `§:property:blog.${d}`, `Blog of ${name}`, true),
      ],
      changes: [
        { kind: "entity", claim_key: "", id: null, at: t(i), verified: null, status: "accepted", reason: null, position: 3 * i + 1 },
        {
          kind: "properties",
          claim_key: `§:property:blog.${d}`,
          id: `§:property:blog.${d}`,
          at: t(i),
          verified: true,
          status: null,
          reason: null,
          position: 3 * i + 2,
        },
        {
          kind: "credentials",
          claim_key: `@e${i}@guild.example/members`,
          id: `@e${i}@guild.example/members`,
          at: t(i),
          verified: i % 2 === 1,
          status: null,
          reason: null,
          position: 3 * i + 3,
        },
      ],
    };
    chunk += `${JSON.stringify(line)}\n`;
    if (chunk.length > 1 << 20) {
      await write(chunk);
      chunk = "";
    }
  }
  for (let i = 0; i < n; i++) {
    const job: ExportJob = {
      job: { domain: domainOf(i), reason: "recheck", priority: 2, due_at: t(i + 86_400), backoff_s: 0, attempts: 0, queued_at: t(i) },
    };
    chunk += `${JSON.stringify(job)}\n`;
    if (chunk.length > 1 << 20) {
      await write(chunk);
      chunk = "";
    }
  }
  await write(chunk);
  out.end();
  await once(out, "finish");
}

/** Resident memory of `pid` in MB, 0 once it is gone. */
export function rssMb(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
    return line ? Number(line[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The children of `pid` (the embedded engine runs in one). */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** Runs `ident` with `args`; its time, the entities a second it says, and the peak RSS of it and its children. */
export async function ident(
  args: string[],
  env: Record<string, string>,
): Promise<{ s: number; peak: number; engine: number; said: string }> {
  const started = performance.now();
  const child = endsWithRun(
    spawn(process.execPath, [BIN, ...args], {
      env: Object.assign({}, process.env, { IDENT_CRAWL: "0", IDENT_LOG_LEVEL: "warn" }, env),
      stdio: ["ignore", "ignore", "pipe"],
    }),
  );
  let said = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (t: string) => (said += t));
  let peak = 0;
  let engine = 0;
  const timer = setInterval(() => {
    const pid = child.pid ?? 0;
    peak = Math.max(peak, rssMb(pid));
    engine = Math.max(
      engine,
      childrenOf(pid).reduce((sum, c) => sum + rssMb(c), 0),
    );
  }, 100);
  const [code] = (await once(child, "exit")) as [number];
  clearInterval(timer);
  if (code !== 0) throw new Error(`ident ${args.join(" ")} exited ${code}: ${said}`);
  return { s: (performance.now() - started) / 1000, peak, engine, said: said.trim() };
}

const rate = (n: number, s: number) => Math.round(n / s).toLocaleString("en-US");

export async function benchExport(): Promise<void> {
  const dir = scratchDir("ident-bench-export-");
  const pg = await startPostgres();
  try {
    const N = 100_000;
    const file = path.join(dir, "synthetic.ndjson");
    await writeSynthetic(file, N);
    const mb = (f: string) => (statSync(f).size / 1024 / 1024).toFixed(0);
    const embedded = { IDENT_DATA_DIR: path.join(dir, "embedded") };
    const server = { IDENT_DATABASE_URL: await pg.database("bench_export") };
    const lines: string[] = [];
    for (const [label, env] of [
      ["embedded", embedded],
      ["PostgreSQL", server],
    ] as const) {
      const into = await ident(["store", "import", file], env);
      const out = path.join(dir, `out-${label}.ndjson`);
      const from = await ident(["store", "export", out], env);
      // The command's own time, from its last line: without starting its engine (a new embedded store is
      // made then, about 3 s) nor loading the code.
      const own = (said: string) => Number(said.match(/ in ([\d.]+) s/)?.[1] ?? NaN);
      lines.push(
        `${label.padEnd(10)} import ${rate(N, into.s)} entities/s (goal ≥ 10,000; ${into.s.toFixed(1)} s; ${rate(N, own(into.said))}/s once started), ` +
          `peak RSS ${into.peak.toFixed(0)} MB${into.engine > 0 ? ` + engine ${into.engine.toFixed(0)} MB` : ""}; ` +
          `export ${rate(N, from.s)} entities/s (goal ≥ 20,000; ${from.s.toFixed(1)} s; ${rate(N, own(from.said))}/s once started), ` +
          `peak RSS ${from.peak.toFixed(0)} MB${from.engine > 0 ? ` + engine ${from.engine.toFixed(0)} MB` : ""}`,
      );
    }
    const same = readFileSync(path.join(dir, "out-embedded.ndjson")).equals(readFileSync(path.join(dir, "out-PostgreSQL.ndjson")));
    console.log(
      `export    100,000 entities (2 claims, 3 changes, 1 job each; ${mb(file)} MB), through \`ident store\`; one run; ` +
        `the two exports ${same ? "are" : "are NOT"} the same bytes\n          ${lines.join("\n          ")}`,
    );
    rmSync(file, { force: true });
    if (process.env.BENCH_EXPORT_MILLION !== "0") {
      const M = 1_000_000;
      const big = path.join(dir, "million.ndjson");
      await writeSynthetic(big, M);
      const into = await ident(["store", "import", big], { IDENT_DATABASE_URL: await pg.database("bench_million") });
      console.log(
        `export    1,000,000 entities (${mb(big)} MB) imported into PostgreSQL in ${into.s.toFixed(0)} s: ${rate(M, into.s)} entities/s, ` +
          `peak RSS ${into.peak.toFixed(0)} MB (the 100k import: see above)`,
      );
    }
  } finally {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
