// @ts-check
/**
 * The embedded store's engine on a thread of its own (docs/decisions.md#the-index): PGlite runs
 * PostgreSQL compiled to WebAssembly synchronously, so a large statement on the app's thread kept
 * every page waiting (a property lookup's record held it for 100–330 ms at a time). lib/store/db.ts
 * talks to this thread in messages; plain JavaScript, because it runs as it is, outside any bundle.
 *
 * Messages in: { id, op: "query", sql, params, tx? } | { id, op: "begin" } | { id, op: "end", tx, commit } | { id, op: "close" }
 * Messages out: { kind: "ready" } | { kind: "failed", message } | { id, rows? , error? }
 */
import { exit } from "node:process";
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { unaccent } from "@electric-sql/pglite/contrib/unaccent";

const port = parentPort;
if (!port) throw new Error("pglite-worker.mjs runs as a worker thread");
/** @type {{ dataDir: string | null }} */
const { dataDir } = workerData;

/** @type {PGlite} */
let db;
try {
  // 16 MB of shared buffers instead of PostgreSQL's 128 MB: the index shares the process with the
  // resolver, and the default costs about 110 MB more RSS (measured: 296 → 186 MB on reopening).
  db = await PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    extensions: { pg_trgm, unaccent },
    postgresqlconf: ["shared_buffers=16MB"],
  });
  port.postMessage({ kind: "ready" });
} catch (err) {
  port.postMessage({ kind: "failed", message: err instanceof Error ? err.message : String(err) });
  exit(1);
}

const ROLLBACK = Symbol("rollback");
/** Open transactions by id: the handle their queries run on, and how to end them. */
const open = new Map();

/** @param {unknown} err */
const errorOf = (err) => ({
  message: err instanceof Error ? err.message : String(err),
  code: typeof err === "object" && err !== null && "code" in err ? String(err.code) : undefined,
});

/** Starts a transaction that stays open until its "end" message. */
function begin() {
  /** @type {(commit: boolean) => void} */
  let end = () => undefined;
  const ended = new Promise((resolve) => (end = resolve));
  return new Promise((resolve, reject) => {
    const finished = db.transaction(async (tx) => {
      resolve({ tx, end, finished });
      if (!(await ended)) throw ROLLBACK;
    });
    // A transaction that could not start reports why.
    finished.catch((err) => (err === ROLLBACK ? undefined : reject(err)));
  });
}

port.on("message", async (m) => {
  try {
    if (m.op === "query") {
      const on = m.tx === undefined ? db : open.get(m.tx)?.tx;
      if (!on) throw new Error("no such transaction");
      const result = await on.query(m.sql, m.params);
      port.postMessage({ id: m.id, rows: result.rows });
    } else if (m.op === "begin") {
      open.set(m.id, await begin());
      port.postMessage({ id: m.id });
    } else if (m.op === "end") {
      const t = open.get(m.tx);
      open.delete(m.tx);
      if (!t) throw new Error("no such transaction");
      t.end(m.commit);
      await t.finished.catch((/** @type {unknown} */ err) => {
        if (err !== ROLLBACK) throw err;
      });
      port.postMessage({ id: m.id });
    } else if (m.op === "close") {
      await db.close();
      port.postMessage({ id: m.id });
    }
  } catch (err) {
    port.postMessage({ id: m.id, error: errorOf(err) });
  }
});
