/**
 * An import cut short (docs/deploying.md#moving-the-index): `ident store import` into an embedded
 * store, stopped part-way as a terminal's Ctrl-C stops it (SIGINT to its process group, the engine
 * included) and as nothing can be stopped more abruptly (SIGKILL to the group). The store opened
 * again holds what it held before, nothing of the file, and keeps its size; a whole import then works.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { createWriteStream, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { openStore, type Store } from "ident-resolver/store";
import { EXPORT_SCHEMA, exportIndex, type ExportEntity, type ExportJob } from "ident-resolver/store";
import { endsWithRun, scratchDir } from "../helpers/scratch";
import { verifiedClaim } from "../helpers/export-fixtures";

const BIN = path.resolve(import.meta.dirname, "../../bin/ident.js");
/** Entities in the file; the import is stopped once it has written some of the first {@link FED}. */
const N = 2000;
const FED = 1500;
const at = (s: number) => new Date(Date.UTC(2025, 0, 1) + s * 1000).toISOString();

/** Words that do not repeat from one description to the next, so the engine cannot compress them away. */
function words(seed: number, count: number): string {
  let x = seed * 2654435761 + 1;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(x.toString(36));
  }
  return out.join(" ");
}

/** An export of {@link N} entities (two claims, a change, a queued job each, 8,000 characters of notes): its lines. */
function exportLines(): string[] {
  const lines = [JSON.stringify({ schema: EXPORT_SCHEMA, counts: { entities: N, claims: 2 * N, changes: N, jobs: N } })];
  const domains = Array.from({ length: N }, (_, i) => `cut-${String(i).padStart(5, "0")}.example`);
  domains.forEach((domain, i) => {
    const claim = (kind: "properties" | "credentials", id: string) => verifiedClaim(domain, kind, id, at(i), at(i + 60));
    const name = `Person ${words(i, 3)}`;
    const line: ExportEntity = {
      entity: {
        domain,
        status: "accepted",
        network_id: `§:entity:${domain}`,
        entity_type: "person",
        details: { name, notes: words(i + N, 1200).slice(0, 8000) },
        problems: [],
        verified: 2,
        unverified: 0,
        first_seen_at: at(i),
        last_checked_at: at(i + 60),
        name,
        description: `The site of ${name}`,
        ever_accepted: true,
        failed_checks: 0,
      },
      claims: [claim("credentials", `@m@guild.example/members/${domain}`), claim("properties", `§:property:blog.${domain}`)],
      changes: [{ kind: "entity", claim_key: "", id: null, at: at(i), verified: null, status: "accepted", reason: null }],
    };
    lines.push(JSON.stringify(line));
  });
  for (const domain of domains) {
    const job: ExportJob = {
      job: { domain, reason: "recheck", priority: 2, due_at: at(90_000), backoff_s: 0, attempts: 0, queued_at: at(60) },
    };
    lines.push(JSON.stringify(job));
  }
  return lines;
}

/** The bytes of every file under `dir` (one the engine removes meanwhile counts nothing). */
function folderBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce(
    (sum, e) =>
      sum +
      (e.isDirectory() ? folderBytes(path.join(dir, e.name)) : (statSync(path.join(dir, e.name), { throwIfNoEntry: false })?.size ?? 0)),
    0,
  );
}

/** The store's export (its first line counts what it holds), and what the store said as it opened, after `before` ran in it. */
async function contents(dataDir: string, before?: (store: Store) => Promise<unknown>): Promise<{ text: string; said: string[] }> {
  const said: string[] = [];
  const store = await openStore({ kind: "embedded", dataDir }, (line) => said.push(line));
  try {
    await before?.(store);
    let text = "";
    await exportIndex(store.db, (line) => void (text += line));
    return { text, said };
  } finally {
    await store.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether any process of group `pgid` is left. */
const groupAlive = (pgid: number) => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * `ident store import` of a pipe into `dataDir`, in a process group of its own as a terminal starts
 * it; the pipe is fed the first {@link FED} entities and held open. Once the store's folder has grown
 * by `grown` bytes (the rows written), the group is sent `signal`. Answers the command's exit and
 * what it said, once every process of the group has ended.
 */
async function interrupted(dataDir: string, lines: string[], signal: NodeJS.Signals, grown: number) {
  const fifo = path.join(path.dirname(dataDir), `pipe-${signal}`);
  execFileSync("mkfifo", [fifo]);
  const before = folderBytes(dataDir);
  const child = endsWithRun(
    spawn(process.execPath, [BIN, "store", "import", fifo], {
      detached: true,
      env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", IDENT_CRAWL: "0", IDENT_DATA_DIR: dataDir },
      stdio: ["ignore", "ignore", "pipe"],
    }),
    "SIGKILL",
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += String(chunk)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, sig) => resolve({ code, signal: sig })),
  );
  const writer = createWriteStream(fifo);
  writer.on("error", () => undefined);
  writer.write(`${lines.slice(0, FED + 1).join("\n")}\n`);
  for (let waited = 0; folderBytes(dataDir) < before + grown; waited += 50) {
    if (waited > 60_000) throw new Error(`the import wrote ${folderBytes(dataDir) - before} bytes in a minute`);
    await sleep(50);
  }
  const pgid = child.pid!;
  process.kill(-pgid, signal);
  // The pipe's writer goes too, as the command before `|` does in a terminal; once the import has
  // said what it did, so that what the import meets is the signal, not the end of the file.
  for (let waited = 0; stderr === "" && child.exitCode === null && child.signalCode === null && waited < 30_000; waited += 20)
    await sleep(20);
  writer.destroy();
  const exit = await exited;
  for (let waited = 0; groupAlive(pgid); waited += 50) {
    if (waited > 30_000) throw new Error(`the engine of an import stopped by ${signal} is still running 30 s later`);
    await sleep(50);
  }
  return { ...exit, stderr };
}

describe("an embedded import cut short (docs/deploying.md#moving-the-index)", () => {
  it("by Ctrl-C (SIGINT to its group), then by SIGKILL: the store holds what it held and keeps its size; a whole import then works", async () => {
    const dir = scratchDir("ident-import-cut-");
    // Gone after the test, not only when its worker ends (a runner may end it without its exit hooks).
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const dataDir = path.join(dir, "data");
    const lines = exportLines();
    const file = path.join(dir, "whole.ndjson");
    writeFileSync(file, `${lines.join("\n")}\n`);
    // A store that holds a queued seed: the file's jobs wait in a table of the import's own.
    const seed = "INSERT INTO crawl_queue (domain, reason, priority, due_at) VALUES ('seed.example', 'seed', 0, $1)";
    const held = await contents(dataDir, (store) => store.db.query(seed, [at(0)]));
    const before = folderBytes(dataDir);
    // What the import has written when it is stopped: more than the +25 % the store may grow, and less
    // than the 12 MB the first 1,500 entities make (at 30 % the new schema's tables of notices made
    // the empty store big enough that its 30 % was more than those 1,500 write, and the test waited).
    const grown = Math.ceil(before * 0.27);

    const byCtrlC = await interrupted(dataDir, lines, "SIGINT", grown);
    expect(byCtrlC).toEqual({
      code: 130,
      signal: null,
      stderr: "ident: interrupted (SIGINT): the import was rolled back, and nothing was imported\n",
    });
    const afterCtrlC = folderBytes(dataDir);

    const byKill = await interrupted(dataDir, lines, "SIGKILL", grown);
    expect(byKill.signal).toBe("SIGKILL");
    // Opened again: what the killed import left is removed, and said.
    const after = await contents(dataDir);
    expect(after.text).toBe(held.text);
    expect(after.said).toEqual([
      expect.stringMatching(/^store: removed \d+ files \([\d.]+ MB\) that a transaction cut short had left in /),
    ]);
    const afterKill = folderBytes(dataDir);
    const sizes = `${before} → ${afterCtrlC} after Ctrl-C → ${afterKill} after SIGKILL and opening again`;
    expect(afterCtrlC, sizes).toBeLessThanOrEqual(before * 1.25);
    expect(afterKill, sizes).toBeLessThanOrEqual(before * 1.25);

    const whole = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [BIN, "store", "import", file],
        { env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", IDENT_CRAWL: "0", IDENT_DATA_DIR: dataDir } },
        (err, _stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stderr }),
      ),
    );
    expect(whole.stderr).toMatch(/^ident: imported 2,000 entities \(4,000 claims, 2,000 changes\) and 2,000 jobs in /);
    expect(whole.code).toBe(0);
  }, 180_000);
});
