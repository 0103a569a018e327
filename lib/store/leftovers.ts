/**
 * What a transaction cut short leaves in the embedded store's folder (docs/deploying.md#moving-the-index).
 * A transaction that makes new files for a table (an import emptying its tables gets new ones; its
 * own tables of rows waiting) deletes them when it rolls back. An engine that ends before it can
 * (SIGKILL, a power cut) leaves them: no table names them any more, PostgreSQL never looks at them
 * again, and no VACUUM can give them back. The engine removes them when it opens the folder next,
 * before it takes a statement (lib/store/db.ts, `openEmbedded`).
 */
import { readdirSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import type { Queryable } from "./queryable.ts";

/** PostgreSQL's first number for what is not its own catalogue: below it, nothing is ever removed. */
const FIRST_NORMAL_NUMBER = 16384;

/**
 * The file number of `name`, a file of a database's folder that holds a table's or an index's pages:
 * `16618`, its other forks and segments (`16618_fsm`, `16618_vm`, `16618.1`) and a temporary table's
 * (`t0_16618`); null for any other file (`PG_VERSION`, `pg_filenode.map`).
 */
export function fileNumber(name: string): number | null {
  const m = /^(?:t\d+_)?(\d+)(?:_(?:fsm|vm|init))?(?:\.\d+)?$/.exec(name);
  return m ? Number(m[1]) : null;
}

/** The files of `names` that no relation of `recorded` (their file numbers) owns, and that PostgreSQL's catalogue does not own. */
export function leftoverFiles(names: readonly string[], recorded: ReadonlySet<number>): string[] {
  return names.filter((name) => {
    const n = fileNumber(name);
    return n !== null && n >= FIRST_NORMAL_NUMBER && !recorded.has(n);
  });
}

export type Removed = { files: number; bytes: number };

/**
 * Removes the files in the open database's folder under `dataDir` that no relation owns. Run only
 * while nothing else uses the engine (no transaction can be making a table's files meanwhile). A
 * checkpoint first, so that no log from before is ever replayed into a number used again.
 */
export async function removeLeftovers(db: Queryable, dataDir: string): Promise<Removed> {
  const [database] = await db.query<{ oid: string }>("SELECT oid::text AS oid FROM pg_database WHERE datname = current_database()");
  if (!database) return { files: 0, bytes: 0 };
  const folder = path.join(dataDir, "base", database.oid);
  const owned = await db.query<{ n: string }>(
    "SELECT pg_relation_filenode(oid)::text AS n FROM pg_class WHERE pg_relation_filenode(oid) IS NOT NULL",
  );
  const left = leftoverFiles(readdirSync(folder), new Set(owned.map((r) => Number(r.n))));
  if (left.length === 0) return { files: 0, bytes: 0 };
  await db.query("CHECKPOINT");
  const removed: Removed = { files: 0, bytes: 0 };
  for (const name of left) {
    const file = path.join(folder, name);
    try {
      const bytes = statSync(file).size;
      unlinkSync(file);
      removed.files++;
      removed.bytes += bytes;
    } catch {
      // Gone meanwhile, or not ours to remove: left as it is.
    }
  }
  return removed;
}
