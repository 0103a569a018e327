/**
 * The index's two engines for a test file (docs/decisions.md#the-index): PGlite in a temporary
 * folder, and a PostgreSQL server started for the file from Debian's binaries. Both are removed
 * after the file.
 */
import { cpSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, inject } from "vitest";
import type { StoreLocation } from "ident-resolver/store";
import { startPostgres, type PostgresServer } from "./postgres";
import { scratchDir } from "./scratch";

export type Engine = {
  name: "PGlite" | "PostgreSQL";
  /** A new store holding no entity; `database` names the server's database (PGlite ignores it). */
  location(database?: string): Promise<StoreLocation>;
  /** A new store without even a schema, for a test of the migrations. */
  empty(database?: string): Promise<StoreLocation>;
};

export function useEngines(prefix: string) {
  let server: PostgresServer | undefined;
  const dirs: string[] = [];
  let n = 0;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  /** A temporary folder, removed after the file. */
  const tempDir = () => {
    const d = scratchDir(`ident-${prefix}-`);
    dirs.push(d);
    return d;
  };
  /** A new database on the file's PostgreSQL server. */
  const database = (name = prefix) => {
    if (!server) throw new Error("the PostgreSQL server is not started yet");
    return server.database(`${name}${process.pid}_${n++}`);
  };
  const engines: Engine[] = [
    {
      name: "PGlite",
      location: async () => ({ kind: "embedded", dataDir: newEmbeddedDir(tempDir()) }),
      empty: async () => ({ kind: "embedded", dataDir: path.join(tempDir(), "data") }),
    },
    {
      name: "PostgreSQL",
      location: async (name) => ({ kind: "server", url: await database(name) }),
      empty: async (name) => ({ kind: "server", url: await database(name) }),
    },
  ];
  return { engines, tempDir, database };
}

/**
 * `data` in `dir`: a new embedded index, migrated and closed, copied from the one the run made
 * (test/global-setup.ts) rather than made again (PGlite's initdb and every migration, about 5 s).
 */
export function newEmbeddedDir(dir: string): string {
  const dataDir = path.join(dir, "data");
  cpSync(inject("storeTemplate"), dataDir, { recursive: true });
  return dataDir;
}
