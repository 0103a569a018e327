/**
 * The store's two engines behind one interface (docs/decisions.md#the-index): PGlite (PostgreSQL
 * compiled to WebAssembly, in a child process of its own, in a folder) by default, a PostgreSQL server when a URL is
 * given. Both run the same SQL text with `$1` parameters; nothing above this file knows which.
 */
import { fork, type ChildProcess } from "node:child_process";
import { statfsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { finished } from "node:stream/promises";
import pg from "pg";
import { from as copyFromStdin, to as copyToStdout } from "pg-copy-streams";
import { extend } from "../objects.ts";
import { removeLeftovers } from "./leftovers.ts";
import type { Queryable, Row } from "./queryable.ts";

export type { Queryable, Row } from "./queryable.ts";

/**
 * What a transaction hands its body: statements, and PostgreSQL's COPY both ways in its text format
 * (tab between fields, `\N` for null, backslash escapes), the bulk path of moving the index
 * (docs/deploying.md#moving-the-index). `table`, `columns` and `select` are the caller's own SQL, never
 * a stranger's text.
 */
export interface Tx extends Queryable {
  /** Loads `rows` (COPY text, a line per row) into `columns` of `table`. */
  copyFrom(table: string, columns: readonly string[], rows: string): Promise<void>;
  /** The rows `select` answers, as COPY text. */
  copyTo(select: string): Promise<string>;
}

/** What a store's engine is doing, for /readyz (docs/deploying.md#health). */
export type EngineState = "running" | "restarting";

export interface Db extends Queryable {
  readonly engine: "pglite" | "postgres";
  /** The embedded engine's state under its supervisor; a server's is always running. */
  state?(): EngineState;
  /**
   * Ends the embedded engine's process now, for its supervisor to start a new one: an engine whose
   * write failed for want of space does not recover by itself (PGlite keeps failing every statement).
   */
  restart?(): void;
  /** Runs `body` in one transaction: committed when it returns, rolled back when it throws. */
  transaction<T>(body: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Where the store lives: a folder (or memory) for PGlite, or a server's URL. */
export type StoreLocation = { kind: "embedded"; dataDir: string | null } | { kind: "server"; url: string };

/** A store that cannot be opened, with a message that names what to fix. */
export class StoreError extends Error {
  override name = "StoreError";
}

type Reply = { id: number; rows?: Row[]; text?: string; error?: { message: string; code?: string } };
type Started = { kind: "ready" } | { kind: "failed"; message: string; held?: boolean };

/** An error from the engine's thread, with PostgreSQL's SQLSTATE `code` when it has one. */
class EngineError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * Opens the embedded store; `dataDir` null keeps it in memory. PGlite runs in a child process of its
 * own (lib/store/pglite-engine.mjs): its statements never hold up the thread that answers pages, and
 * its memory is not the app's (docs/decisions.md#memory). The process ends with the app. The files a
 * transaction cut short left in the folder are removed before the store is used, and said to `log`.
 */
export async function openEmbedded(dataDir: string | null, gone?: (why: string) => void, log?: (line: string) => void): Promise<Db> {
  const child = forkEngine(dataDir);
  const engine: EngineLink = {
    child,
    pending: new Map(),
    next: 1,
    gone: null,
    running: false,
    exited: new Promise<void>((resolve) => child.once("exit", () => resolve())),
  };
  endsWithApp(child, () => (engine.gone ??= new StoreError("the embedded store is closed: its app is ending")));
  const started = engineStarted(engine, gone);
  try {
    const first = await started;
    // The folder held by another process: said as the engine says it, in one line.
    if (first.kind === "failed" && first.held) throw new StoreError(first.message);
    if (first.kind === "failed") throw new Error(first.message);
    engine.running = true;
  } catch (err) {
    await endEngine(engine);
    throw notOpened(err, dataDir);
  }
  if (dataDir) await reclaimLeftovers({ query: queryOn(engine) }, dataDir, log);
  return embeddedDb(engine);
}

/** The embedded engine's process as this side holds it: the replies awaited, and why it can take no more. */
type EngineLink = {
  child: ChildProcess;
  pending: Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>;
  /** The id of the next message. */
  next: number;
  /** What every later call fails with, once the process is gone or closed. */
  gone: Error | null;
  /** Whether the engine started: a death after that is told to the supervisor. */
  running: boolean;
  exited: Promise<void>;
};

/** The engine's process, started on `dataDir` (none: in memory). */
function forkEngine(dataDir: string | null): ChildProcess {
  return fork(fileURLToPath(new URL("./pglite-engine.mjs", import.meta.url)), dataDir ? [dataDir] : [], {
    // Rows hold Dates: the structured clone carries them as they are.
    serialization: "advanced",
    // Not the app's flags (a loader, a profiler): the engine is plain JavaScript. PostgreSQL's
    // WebAssembly compiled a function at a time, as it is first called, and the young generation
    // held to Node 20's size (docs/decisions.md#memory).
    execArgv: ["--wasm-lazy-compilation", "--max-semi-space-size=16"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

/** Fails every reply awaited, and every later call, with `err` (or what the engine was already gone with). */
function stopEngine(engine: EngineLink, err: Error): void {
  engine.gone ??= err;
  for (const p of engine.pending.values()) p.reject(engine.gone);
  engine.pending.clear();
}

/**
 * How the engine's start went, and its replies handed to what awaits them. A process that dies fails
 * the opening, or later what waits on it and every later call, in words; one that dies once running,
 * not closed by this side, is told to `gone` (the supervisor).
 */
function engineStarted(engine: EngineLink, gone?: (why: string) => void): Promise<Started> {
  return new Promise<Started>((resolve, reject) => {
    engine.child.on("error", (err) => {
      reject(err);
      stopEngine(engine, new StoreError(`the embedded store stopped: ${err.message}`));
    });
    engine.child.on("exit", (code, signal) => {
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      reject(new Error(`its process stopped (${how})`));
      // Died once running, not closed by this side: the supervisor is told.
      if (!engine.gone && engine.running) gone?.(how);
      stopEngine(engine, new StoreError(`the embedded store stopped (${how})`));
    });
    engine.child.on("message", (m: Started | Reply) => {
      if ("kind" in m) return resolve(m);
      const p = engine.pending.get(m.id);
      engine.pending.delete(m.id);
      p?.resolve(m);
    });
  });
}

/** Ends the engine's process: disconnected, then killed if it has not exited within 5 s. */
async function endEngine(engine: EngineLink): Promise<void> {
  const child = engine.child;
  if (child.connected) child.disconnect();
  if (child.exitCode === null && child.signalCode === null) {
    const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await engine.exited;
    clearTimeout(killer);
  }
}

/** Why the embedded store in `dataDir` could not be opened, in words, from what its start failed with. */
function notOpened(err: unknown, dataDir: string | null): StoreError {
  if (err instanceof StoreError) return err;
  const message = (err as Error).message;
  // docs/deploying.md#when-a-part-fails: a start on a full disk says so, whatever PGlite said.
  const free = dataDir ? freeBytes(dataDir) : null;
  if (dataDir && (isDiskFull(err) || (free !== null && free < FULL_BELOW))) {
    return new StoreError(
      `the disk holding ${dataDir} is full (${free ?? 0} bytes free): free some space, or set IDENT_DATA_DIR to a folder on another disk`,
    );
  }
  return new StoreError(`the embedded store in ${dataDir ?? "memory"} cannot be opened: ${message}`);
}

/** Sends `message` to the engine; answers its reply, or throws the engine's error. */
function send(engine: EngineLink, message: Record<string, unknown>): Promise<Reply> {
  return new Promise<Reply>((resolve, reject) => {
    if (engine.gone) return reject(engine.gone);
    const id = engine.next++;
    engine.pending.set(id, { resolve, reject });
    engine.child.send(extend(message, { id }), (err) => {
      if (err) stopEngine(engine, new StoreError(`the embedded store stopped: ${err.message}`));
    });
  }).then((reply) => {
    if (reply.error) throw new EngineError(reply.error.message, reply.error.code);
    return reply;
  });
}

/** A statement's rows, run in the engine's transaction `tx` (none: on its own). */
const queryOn =
  (engine: EngineLink, tx?: number) =>
  async <T extends Row>(sql: string, params: unknown[] = []) =>
    ((await send(engine, { op: "query", sql, params, tx })).rows ?? []) as T[];

/**
 * The engine's transaction `tx` as a {@link Tx}. PGlite's COPY reads from and writes to its device
 * /dev/blob (https://pglite.dev/docs/api#query-options).
 */
const txOn = (engine: EngineLink, tx: number): Tx => ({
  query: queryOn(engine, tx),
  copyFrom: async (table, columns, rows) =>
    void (await send(engine, { op: "copyFrom", sql: `COPY ${table} (${columns.join(", ")}) FROM '/dev/blob'`, text: rows, tx })),
  copyTo: async (select) => (await send(engine, { op: "copyTo", sql: `COPY (${select}) TO '/dev/blob'`, tx })).text ?? "",
});

/** The started engine as a {@link Db}. */
function embeddedDb(engine: EngineLink): Db {
  return {
    engine: "pglite",
    query: queryOn(engine),
    async transaction(body) {
      const { id } = await send(engine, { op: "begin" });
      try {
        const out = await body(txOn(engine, id));
        await send(engine, { op: "end", tx: id, commit: true });
        return out;
      } catch (err) {
        await send(engine, { op: "end", tx: id, commit: false }).catch(() => undefined);
        throw err;
      }
    },
    async close() {
      if (!engine.gone) await send(engine, { op: "close" }).catch(() => undefined);
      engine.gone ??= new StoreError("the embedded store is closed");
      await endEngine(engine);
    },
    restart: () => void engine.child.kill("SIGKILL"),
  };
}

/**
 * `engine` ended at once when this process exits without closing the store, before its other exit
 * hooks run (a test's removes the folder the engine would still write in); `ending` first, so the
 * supervisor does not start it again. A stop signal sent to the whole group the engine leaves to the
 * app (lib/store/pglite-engine.mjs).
 */
function endsWithApp(engine: ChildProcess, ending: () => void): void {
  const end = () => {
    ending();
    engine.kill("SIGKILL");
  };
  process.prependListener("exit", end);
  engine.once("exit", () => process.off("exit", end));
}

/**
 * The files an engine that ended in the middle of a transaction left in `dataDir` (lib/store/leftovers.ts),
 * removed; said in one line when there were any. Best effort: a store that cannot say opens all the same.
 */
async function reclaimLeftovers(db: Queryable, dataDir: string, log?: (line: string) => void): Promise<void> {
  try {
    const { files, bytes } = await removeLeftovers(db, dataDir);
    if (files > 0)
      log?.(
        `store: removed ${files} files (${(bytes / 1048576).toFixed(1)} MB) that a transaction cut short had left in ${dataDir} (docs/deploying.md#moving-the-index)`,
      );
  } catch (err) {
    log?.(`store: the files a transaction cut short may have left in ${dataDir} were not looked for: ${(err as Error).message}`);
  }
}

/**
 * `db` whose transactions stop once `signal` is aborted (docs/deploying.md#moving-the-index): the
 * statement in progress ends, the next one throws the signal's reason, and the transaction rolls back.
 */
export function interruptible(db: Db, signal: AbortSignal): Db {
  const guarded = (tx: Tx): Tx => ({
    query: async <T extends Row>(sql: string, params?: unknown[]) => {
      signal.throwIfAborted();
      return tx.query<T>(sql, params);
    },
    copyFrom: async (table, columns, rows) => {
      signal.throwIfAborted();
      return tx.copyFrom(table, columns, rows);
    },
    copyTo: async (select) => {
      signal.throwIfAborted();
      return tx.copyTo(select);
    },
  });
  return extend(db, { transaction: <T>(body: (tx: Tx) => Promise<T>) => db.transaction((tx) => body(guarded(tx))) });
}

/** Connects to a PostgreSQL server; fails at once, in words, when it cannot. */
export async function openServer(url: string, log: (line: string) => void = console.error): Promise<Db> {
  const pool = new pg.Pool({ connectionString: url, max: 8, connectionTimeoutMillis: 5000 });
  // A server that goes away later must not crash the process: each query reports its own error, and
  // idle connections closed by the server are said once per outage, not once each.
  let said = false;
  pool.on("error", (err) => {
    if (!said) log(`store: a connection to the database was closed: ${err.message}`);
    said = true;
    setTimeout(() => (said = false), 60_000).unref();
  });
  try {
    await pool.query("SELECT 1");
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new StoreError(`the PostgreSQL server at ${redact(url)} cannot be reached: ${(err as Error).message}`);
  }
  return {
    engine: "postgres",
    query: async <T extends Row>(sql: string, params: unknown[] = []) => (await pool.query<T>(sql, params)).rows,
    async transaction(body) {
      const client = await pool.connect();
      let broken: Error | undefined;
      // A server that goes away mid-transaction makes the client emit "error"; unheard, it would end the
      // process. The next query of the transaction rejects with it all the same.
      const heard = (err: Error) => (broken = err);
      client.on("error", heard);
      try {
        // Read committed whatever the server's default: the counter of changes waits for the transaction
        // before it and then reads what it committed (lib/store/positions.ts), where repeatable read fails.
        await client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
        const out = await body({
          query: async <T extends Row>(sql: string, params: unknown[] = []) => (await client.query<T>(sql, params)).rows,
          async copyFrom(table, columns, rows) {
            const stream = client.query(copyFromStdin(`COPY ${table} (${columns.join(", ")}) FROM STDIN`));
            stream.end(rows);
            await finished(stream);
          },
          async copyTo(select) {
            const chunks: Buffer[] = [];
            for await (const chunk of client.query(copyToStdout(`COPY (${select}) TO STDOUT`))) chunks.push(chunk as Buffer);
            return Buffer.concat(chunks).toString("utf8");
          },
        });
        await client.query("COMMIT");
        return out;
      } catch (err) {
        await client.query("ROLLBACK").catch((rollback: Error) => (broken = rollback));
        throw err;
      } finally {
        client.off("error", heard);
        // A connection that failed, or could not even roll back, is closed, not handed to the next query.
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}

/** Whether an error is a write refused for want of disk space (PostgreSQL's 53100, or the OS's ENOSPC). */
export function isDiskFull(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return code === "53100" || code === "ENOSPC" || /no space left on device/i.test(String(message ?? ""));
}

/** Free space below which a store that cannot open is said to be on a full disk. */
const FULL_BELOW = 1024 * 1024;

/** The bytes free to this process on the disk holding `dir` (or its nearest existing parent); null when it cannot be read. */
function freeBytes(dir: string): number | null {
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      const s = statfsSync(at);
      return s.bavail * s.bsize;
    } catch {
      if (path.dirname(at) === at) return null;
    }
  }
}

/** How soon a dead engine is started again: the first wait, and the longest (doubling between). */
export const RESTART_MS = { first: 500, most: 4000 } as const;

/**
 * The embedded engine under a supervisor (docs/deploying.md#when-a-part-fails): when its process
 * dies it is started again, after 0.5 s, then 1, 2 and at most 4 s between tries (so within 5 s of a
 * death, while it can start), and `prepare` (the migrations) runs on each new engine before it takes
 * a statement. Meanwhile every statement fails at once, in words; the store keeps the results that
 * wait (lib/store/index.ts). A wait is back to 0.5 s once an engine has run a minute.
 */
export async function openSupervised(
  dataDir: string | null,
  prepare: (db: Db) => Promise<void>,
  log: (line: string) => void = console.error,
): Promise<Db> {
  const s: Supervision = {
    dataDir,
    prepare,
    log,
    current: null,
    closed: false,
    wait: RESTART_MS.first,
    startedAt: Date.now(),
    timer: undefined,
  };
  const first = await openEngine(s);
  try {
    await prepare(first);
  } catch (err) {
    s.closed = true;
    await first.close().catch(() => undefined);
    throw err;
  }
  s.current = first;
  return supervisedDb(s);
}

/** What a supervisor holds: the engine running (none while it restarts), and the wait before the next start. */
type Supervision = {
  dataDir: string | null;
  prepare: (db: Db) => Promise<void>;
  log: (line: string) => void;
  current: Db | null;
  closed: boolean;
  wait: number;
  startedAt: number;
  timer: ReturnType<typeof setTimeout> | undefined;
};

/** A new embedded engine, whose death its supervisor hears. */
const openEngine = (s: Supervision): Promise<Db> => openEmbedded(s.dataDir, (how) => engineDied(s, how), s.log);

/** The engine died (`how`): said, and started again later, unless the store is closed. */
function engineDied(s: Supervision, how: string): void {
  const { log } = s;
  s.current = null;
  if (s.closed) return;
  if (Date.now() - s.startedAt > 60_000) s.wait = RESTART_MS.first;
  log(`store: the embedded engine stopped (${how}); starting it again in ${s.wait} ms`);
  startLater(s);
}

/** A new engine started after the wait, which doubles for the next time, up to the longest. */
function startLater(s: Supervision): void {
  s.timer = setTimeout(() => void startAgain(s), s.wait);
  s.timer.unref();
  s.wait = Math.min(s.wait * 2, RESTART_MS.most);
}

/** Starts and prepares a new engine; one that cannot start is tried again later. */
async function startAgain(s: Supervision): Promise<void> {
  const { prepare, log } = s;
  if (s.closed) return;
  try {
    const db = await openEngine(s);
    await prepare(db);
    if (s.closed) return void (await db.close());
    s.current = db;
    s.startedAt = Date.now();
    log("store: the embedded engine runs again; waiting results are being recorded");
  } catch (err) {
    log(`store: the embedded engine could not be started again: ${(err as Error).message}; trying again in ${s.wait} ms`);
    startLater(s);
  }
}

/** The engine running now; throws, in words, while there is none. */
function running(s: Supervision): Db {
  if (s.current) return s.current;
  throw new StoreError(s.closed ? "the embedded store is closed" : "the embedded store is restarting");
}

/** The supervised engine as one {@link Db}: each statement goes to the engine running now. */
function supervisedDb(s: Supervision): Db {
  return {
    engine: "pglite",
    state: () => (s.current || s.closed ? "running" : "restarting"),
    query: async (sql, params) => running(s).query(sql, params),
    transaction: async (body) => running(s).transaction(body),
    restart() {
      s.current?.restart?.();
    },
    async close() {
      s.closed = true;
      clearTimeout(s.timer);
      const last = s.current;
      s.current = null;
      await last?.close();
    },
  };
}

/** The store's database: a server's pool, or the supervised embedded engine, `prepare`d before use. */
export async function openDb(where: StoreLocation, log?: (line: string) => void, prepare?: (db: Db) => Promise<void>): Promise<Db> {
  if (where.kind === "embedded") return openSupervised(where.dataDir, prepare ?? (async () => undefined), log);
  const db = await openServer(where.url, log);
  if (prepare) {
    try {
      await prepare(db);
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
  }
  return db;
}

/** A database URL with its password hidden, for messages. */
export function redact(url: string): string {
  const parsed = URL.parse(url);
  if (!parsed) return "(an invalid URL)";
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}
