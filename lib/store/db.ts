/**
 * The store's two engines behind one interface (docs/decisions.md#the-index): PGlite (PostgreSQL
 * compiled to WebAssembly, in a child process of its own, in a folder) by default, a PostgreSQL server when a URL is
 * given. Both run the same SQL text with `$1` parameters; nothing above this file knows which.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { extend } from "../objects";

export type Row = Record<string, unknown>;

/** Runs one statement; what a transaction hands its body too. */
export interface Queryable {
  query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<T[]>;
}

export interface Db extends Queryable {
  readonly engine: "pglite" | "postgres";
  /** Runs `body` in one transaction: committed when it returns, rolled back when it throws. */
  transaction<T>(body: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Where the store lives: a folder (or memory) for PGlite, or a server's URL. */
export type StoreLocation = { kind: "embedded"; dataDir: string | null } | { kind: "server"; url: string };

/** A store that cannot be opened, with a message that names what to fix. */
export class StoreError extends Error {
  override name = "StoreError";
}

type Reply = { id: number; rows?: Row[]; error?: { message: string; code?: string } };
type Started = { kind: "ready" } | { kind: "failed"; message: string };

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
 * its memory is not the app's (docs/decisions.md#memory). The process ends with the app.
 */
export async function openEmbedded(dataDir: string | null): Promise<Db> {
  const engine = fork(fileURLToPath(new URL("./pglite-engine.mjs", import.meta.url)), dataDir ? [dataDir] : [], {
    // Rows hold Dates: the structured clone carries them as they are.
    serialization: "advanced",
    // Not the app's flags (a loader, a profiler): the engine is plain JavaScript. PostgreSQL's
    // WebAssembly compiled a function at a time, as it is first called (docs/decisions.md#memory).
    execArgv: ["--wasm-lazy-compilation"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  let next = 1;
  let gone: Error | null = null;
  const stop = (err: Error) => {
    gone ??= err;
    for (const p of pending.values()) p.reject(gone);
    pending.clear();
  };
  const exited = new Promise<void>((resolve) => engine.once("exit", () => resolve()));
  // A process that dies fails the opening, or later what waits on it and every later call, in words.
  const started = new Promise<Started>((resolve, reject) => {
    engine.on("error", (err) => {
      reject(err);
      stop(new StoreError(`the embedded store stopped: ${err.message}`));
    });
    engine.on("exit", (code, signal) => {
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      reject(new Error(`its process stopped (${how})`));
      stop(new StoreError(`the embedded store stopped (${how})`));
    });
    engine.on("message", (m: Started | Reply) => {
      if ("kind" in m) return resolve(m);
      const p = pending.get(m.id);
      pending.delete(m.id);
      p?.resolve(m);
    });
  });
  const end = async () => {
    if (engine.connected) engine.disconnect();
    if (engine.exitCode === null && engine.signalCode === null) {
      const killer = setTimeout(() => engine.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(killer);
    }
  };
  try {
    const first = await started;
    if (first.kind === "failed") throw new Error(first.message);
  } catch (err) {
    await end();
    throw new StoreError(`the embedded store in ${dataDir ?? "memory"} cannot be opened: ${(err as Error).message}`);
  }

  const send = (message: Record<string, unknown>): Promise<Reply> =>
    new Promise<Reply>((resolve, reject) => {
      if (gone) return reject(gone);
      const id = next++;
      pending.set(id, { resolve, reject });
      engine.send(extend(message, { id }), (err) => {
        if (err) stop(new StoreError(`the embedded store stopped: ${err.message}`));
      });
    }).then((reply) => {
      if (reply.error) throw new EngineError(reply.error.message, reply.error.code);
      return reply;
    });
  const queryOn =
    (tx?: number) =>
    async <T extends Row>(sql: string, params: unknown[] = []) =>
      ((await send({ op: "query", sql, params, tx })).rows ?? []) as T[];

  return {
    engine: "pglite",
    query: queryOn(),
    async transaction(body) {
      const { id } = await send({ op: "begin" });
      try {
        const out = await body({ query: queryOn(id) });
        await send({ op: "end", tx: id, commit: true });
        return out;
      } catch (err) {
        await send({ op: "end", tx: id, commit: false }).catch(() => undefined);
        throw err;
      }
    },
    async close() {
      if (!gone) await send({ op: "close" }).catch(() => undefined);
      gone ??= new StoreError("the embedded store is closed");
      await end();
    },
  };
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
        await client.query("BEGIN");
        const out = await body({
          query: async <T extends Row>(sql: string, params: unknown[] = []) => (await client.query<T>(sql, params)).rows,
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

export function openDb(where: StoreLocation, log?: (line: string) => void): Promise<Db> {
  return where.kind === "server" ? openServer(where.url, log) : openEmbedded(where.dataDir);
}

/** A database URL with its password hidden, for messages. */
export function redact(url: string): string {
  const parsed = URL.parse(url);
  if (!parsed) return "(an invalid URL)";
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}
