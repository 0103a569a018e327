// @ts-check
/**
 * The embedded store's engine in a process of its own (docs/decisions.md#the-index). PGlite runs
 * PostgreSQL compiled to WebAssembly synchronously, so a large statement on the app's thread would keep
 * every page waiting; and its memory
 * is a fixed cost that has nothing to do with what strangers ask the resolver to fetch, so it is kept
 * out of the app's, where the caps on outbound work bound it (docs/decisions.md#memory). lib/store/db.ts talks to this process over its
 * IPC channel; plain JavaScript, because it runs as it is, outside any bundle.
 *
 * Argument: the data folder, or none for a store in memory.
 * Messages in: { id, op: "query", sql, params, tx? } | { id, op: "copyFrom", sql, text, tx } | { id, op: "copyTo", sql, tx }
 *   | { id, op: "begin" } | { id, op: "end", tx, commit } | { id, op: "close" }
 * Messages out: { kind: "ready" } | { kind: "failed", message, held? } | { id, rows?, text?, error? }
 *
 * The engine holds its folder's lock (`ident.lock`, with its own pid) for as long as it runs, not the
 * app: an engine still writing after its app died keeps a new app out until it has finished.
 */
import { Blob } from "node:buffer";
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { setTimeout } from "node:timers";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { unaccent } from "@electric-sql/pglite/contrib/unaccent";

const send = process.send?.bind(process);
if (!send) throw new Error("pglite-engine.mjs runs as a child process with an IPC channel");
const dataDir = process.argv[2] || null;
// docs/deploying.md#moving-the-index: the engine ends with its app, never before it. A stop signal
// sent to the whole group (Ctrl-C in a terminal, systemd's stop) is the app's to act on: it rolls
// back what it is doing and closes the store, or exits (which ends the engine: lib/store/db.ts).
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => undefined);
// The app that started this process is gone (or closed the store): so is the engine, at once while
// it starts, and once the store is open after rolling back what the app left open (`leave`).
/** @type {() => void} */
let gone = () => process.exit(0);
process.on("disconnect", () => gone());

// docs/decisions.md#memory: the engine runs at the app's priority, as the threads that fetch and
// answer pages do: a page that reads the index waits for it.

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === "EPERM";
  }
  // An engine its app ended (lib/store/db.ts) is gone, though not yet reaped: it holds nothing (Linux).
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return true;
  }
}

/** @param {number} pid whether `pid` is an engine like this one (it leaves by itself once its app is gone) */
function isEngine(pid) {
  try {
    // As built by Next, the file carries a hash: pglite-engine.<hash>.mjs.
    return /pglite-engine(?:\.[\w-]+)?\.mjs/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * Removes `file`, a lock that read `stale` (the pid of a process gone, or not a pid). Renamed aside
 * first and read again: another engine may have taken it over since it was read, and removing that
 * one's lock would let two engines write in one folder (each taking the other's new files for
 * leftovers, lib/store/leftovers.ts); such a lock is put back.
 * @param {string} file
 * @param {string} stale
 */
function takeOver(file, stale) {
  const aside = `${file}.${process.pid}.old`;
  try {
    renameSync(file, aside);
  } catch {
    return; // removed meanwhile
  }
  let text = stale;
  try {
    text = readFileSync(aside, "utf8");
  } catch {
    // gone: nothing to put back
  }
  try {
    if (text !== stale) linkSync(aside, file);
  } catch {
    // a lock in place already: it stands
  }
  rmSync(aside, { force: true });
}

/**
 * Takes `dir`'s lock for this process; a lock left by a process that is gone is taken over. An
 * engine that holds it is waited for, 5 s at most (one whose app died ends once it has written what
 * it was writing). Answers the words of a lock held, or null once taken.
 * @param {string} dir
 * @returns {Promise<string | null>}
 */
async function lock(dir) {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "ident.lock");
  const until = Date.now() + 5000;
  for (;;) {
    // Written whole beside it, then linked in place (which fails if a lock is there): a lock is never
    // seen empty, half-written, by an engine deciding whether its process is gone.
    const mine = `${file}.${process.pid}.new`;
    writeFileSync(mine, String(process.pid));
    try {
      linkSync(mine, file);
      rmSync(mine, { force: true });
      process.once("exit", () => {
        try {
          if (readFileSync(file, "utf8").trim() === String(process.pid)) unlinkSync(file);
        } catch {
          // already gone
        }
      });
      return null;
    } catch (err) {
      rmSync(mine, { force: true });
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== "EEXIST") throw err;
      let text;
      try {
        text = readFileSync(file, "utf8");
      } catch {
        continue; // removed meanwhile
      }
      const pid = Number(text.trim());
      if (!(Number.isInteger(pid) && pid > 0 && alive(pid))) {
        takeOver(file, text);
        continue;
      }
      if (!isEngine(pid) || Date.now() >= until) {
        return `the store in ${dir} is in use by another process (pid ${pid}); stop it or set IDENT_DATA_DIR to another folder`;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** @type {PGlite} */
let db;
try {
  const held = dataDir ? await lock(dataDir) : null;
  if (held) {
    send({ kind: "failed", message: held, held: true }, () => process.exit(1));
    await new Promise(() => undefined);
  }
  // 16 MB of shared buffers instead of PostgreSQL's 128 MB (docs/decisions.md#memory). No more log than
  // recovery needs: a table emptied in a transaction (an import's) is written unlogged, and a failed
  // import leaves no log behind (docs/deploying.md#what-an-import-refuses).
  db = await PGlite.create({
    extensions: { pg_trgm, unaccent },
    postgresqlconf: ["shared_buffers=16MB", "wal_level=minimal", "max_wal_senders=0"],
    ...(dataDir ? { dataDir } : {}),
  });
  send({ kind: "ready" }, () => undefined);
} catch (err) {
  // Said before leaving: an exit at once could drop the message.
  send({ kind: "failed", message: err instanceof Error ? err.message : String(err) }, () => process.exit(1));
  await new Promise(() => undefined); // nothing below runs: the process leaves once the message is sent
}

const ROLLBACK = Symbol("rollback");
/** Open transactions by id: the handle their queries run on, and how to end them. */
const open = new Map();

let leaving = false;

/**
 * The app that started this process closed the store, or died without a word (SIGKILL): what it
 * left open is rolled back, so the files an import made for its rows go with it
 * (docs/deploying.md#moving-the-index), and the process ends at once (without a checkpoint: a new
 * app may be waiting for the folder).
 */
async function leave() {
  leaving = true;
  const left = [...open.values()];
  open.clear();
  for (const t of left) t.end(false);
  await Promise.allSettled(left.map((t) => t.finished));
  process.exit(0);
}
gone = () => void leave();

/**
 * A reply to the app; dropped when it is gone (the engine is then leaving).
 * @param {Record<string, unknown>} m
 */
const reply = (m) => void send(m, () => undefined);

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

/** @typedef {{ id: number, op: "query" | "copyFrom" | "copyTo" | "begin" | "end" | "close", sql: string, params?: unknown[], text?: string, tx?: number, commit?: boolean }} Message */
process.on("message", async (/** @type {Message} */ m) => {
  try {
    if (m.op === "query") {
      const on = m.tx === undefined ? db : open.get(m.tx)?.tx;
      if (!on) throw new Error("no such transaction");
      const result = await on.query(m.sql, m.params);
      reply({ id: m.id, rows: result.rows });
    } else if (m.op === "copyFrom" || m.op === "copyTo") {
      // COPY through PGlite's /dev/blob: the rows in, or out, as one text (lib/store/db.ts, Tx).
      const on = open.get(m.tx)?.tx;
      if (!on) throw new Error("no such transaction");
      const result = await on.query(m.sql, [], m.op === "copyFrom" ? { blob: new Blob([m.text ?? ""]) } : {});
      reply({ id: m.id, text: m.op === "copyTo" ? ((await result.blob?.text()) ?? "") : undefined });
    } else if (m.op === "begin") {
      const t = await begin();
      // Begun as the app went: rolled back at once, as `leave` rolled back the others.
      if (leaving) return void t.end(false);
      open.set(m.id, t);
      reply({ id: m.id });
    } else if (m.op === "end") {
      const t = open.get(m.tx);
      open.delete(m.tx);
      if (!t) throw new Error("no such transaction");
      t.end(m.commit);
      await t.finished.catch((/** @type {unknown} */ err) => {
        if (err !== ROLLBACK) throw err;
      });
      reply({ id: m.id });
    } else if (m.op === "close") {
      await db.close();
      reply({ id: m.id });
    }
  } catch (err) {
    reply({ id: m.id, error: errorOf(err) });
  }
});
