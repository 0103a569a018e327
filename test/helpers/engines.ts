/**
 * The index's two engines for a test file (docs/decisions.md#the-index): PGlite in a temporary
 * folder, and a PostgreSQL server started for the file from Debian's binaries. Both are removed
 * after the file.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { StoreLocation } from "../../lib/store";
import { startPostgres, type PostgresServer } from "./postgres";
import { scratchDir } from "./scratch";

export type Engine = {
  name: "PGlite" | "PostgreSQL";
  /** A new, empty store; `database` names the server's database (PGlite ignores it). */
  location(database?: string): Promise<StoreLocation>;
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
    { name: "PGlite", location: async () => ({ kind: "embedded", dataDir: path.join(tempDir(), "data") }) },
    { name: "PostgreSQL", location: async (name) => ({ kind: "server", url: await database(name) }) },
  ];
  return { engines, tempDir, database };
}
