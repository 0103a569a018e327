/**
 * A failed import leaves the store its size (docs/deploying.md#moving-the-index): four failed imports
 * of 5,000 entities, into an empty store and with `--merge`, on the embedded engine and PostgreSQL.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openStore, type StoreLocation } from "ident-resolver/store";
import { useEngines } from "../helpers/engines";
import { fill, count, failingBulk, folderBytes, run, envOf } from "../helpers/export-fixtures";

const { engines: ENGINES, tempDir } = useEngines("importfailed");

describe.each(ENGINES)("a failed import on $name", ({ name, location }) => {
  /** The store's size: its folder's files, or the server's database. */
  const sizeOf = async (where: StoreLocation) => {
    if (where.kind === "embedded") return folderBytes(where.dataDir!);
    const store = await openStore(where);
    try {
      const [row] = await store.db.query<{ n: string }>("SELECT pg_database_size(current_database()) AS n");
      return Number(row?.n);
    } finally {
      await store.close();
    }
  };
  const bulk = () => {
    const file = path.join(tempDir(), "failing.ndjson");
    writeFileSync(file, failingBulk(5000));
    return file;
  };

  it("leaves the store its size: four failed imports of 5,000 entities, +25 % at most", async () => {
    const where = await location();
    await (await openStore(where)).close();
    const file = bulk();
    const before = await sizeOf(where);
    for (let i = 0; i < 4; i++) {
      const into = await run(["store", "import", file], envOf(where));
      expect(into.stderr).toMatch(/ line 10002: not valid JSON/);
    }
    const after = await sizeOf(where);
    expect(after, `${name}: ${before} → ${after} bytes`).toBeLessThanOrEqual(before * 1.25);
    const store = await openStore(where);
    try {
      expect(await count(store, "entities")).toBe(0);
    } finally {
      await store.close();
    }
  }, 180_000);

  it("into a store that holds entities (--merge), four failed imports leave it its size too", async () => {
    const where = await location();
    const store = await openStore(where);
    await fill(store);
    await store.close();
    const file = bulk();
    const before = await sizeOf(where);
    for (let i = 0; i < 4; i++) {
      const into = await run(["store", "import", file, "--merge"], envOf(where));
      expect(into.stderr).toMatch(/ line 10002: not valid JSON/);
    }
    const after = await sizeOf(where);
    expect(after, `${name}: ${before} → ${after} bytes`).toBeLessThanOrEqual(before * 1.25);
  }, 180_000);
});
