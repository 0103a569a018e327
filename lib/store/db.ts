/**
 * The store's two engines behind one interface (docs/decisions.md#the-index): PGlite (PostgreSQL
 * compiled to WebAssembly, in-process, in a folder) by default, a PostgreSQL server when a URL is
 * given. Both run the same SQL text with `$1` parameters; nothing above this file knows which.
 */
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { unaccent } from "@electric-sql/pglite/contrib/unaccent";
import pg from "pg";

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

/** Opens the embedded store; `dataDir` null keeps it in memory. */
export async function openEmbedded(dataDir: string | null): Promise<Db> {
  let db: PGlite;
  try {
    // 16 MB of shared buffers instead of PostgreSQL's 128 MB: the index shares the process with the
    // resolver, and the default costs about 110 MB more RSS (measured: 296 → 186 MB on reopening).
    db = await PGlite.create({
      ...(dataDir ? { dataDir } : {}),
      extensions: { pg_trgm, unaccent },
      postgresqlconf: ["shared_buffers=16MB"],
    });
  } catch (err) {
    throw new StoreError(`the embedded store in ${dataDir ?? "memory"} cannot be opened: ${(err as Error).message}`);
  }
  return {
    engine: "pglite",
    query: async <T extends Row>(sql: string, params: unknown[] = []) => (await db.query<T>(sql, params)).rows,
    transaction: (body) =>
      db.transaction((tx) =>
        body({ query: async <T extends Row>(sql: string, params: unknown[] = []) => (await tx.query<T>(sql, params)).rows }),
      ),
    close: () => db.close(),
  };
}

/** Connects to a PostgreSQL server; fails at once, in words, when it cannot. */
export async function openServer(url: string): Promise<Db> {
  const pool = new pg.Pool({ connectionString: url, max: 8, connectionTimeoutMillis: 5000 });
  // A server that goes away later must not crash the process: each query reports its own error.
  pool.on("error", (err) => console.error(`store: ${err.message}`));
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
      try {
        await client.query("BEGIN");
        const out = await body({
          query: async <T extends Row>(sql: string, params: unknown[] = []) => (await client.query<T>(sql, params)).rows,
        });
        await client.query("COMMIT");
        return out;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

export function openDb(where: StoreLocation): Promise<Db> {
  return where.kind === "server" ? openServer(where.url) : openEmbedded(where.dataDir);
}

/** A database URL with its password hidden, for messages. */
export function redact(url: string): string {
  const parsed = URL.parse(url);
  if (!parsed) return "(an invalid URL)";
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}
