/**
 * The planner's statistics as the index grows by lookups (docs/decisions.md#search-at-size): the
 * embedded engine has no autovacuum, so the store analyzes its tables itself once the entities it
 * counts and those its planner knows of differ by more than autovacuum's rule; a server's own
 * autovacuum is left to it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { analyzeIfBehind, openStore, statisticsBehind, type Store } from "ident-resolver/store";
import { at, result } from "../helpers/export-fixtures";
import { useEngines } from "../helpers/engines";

const { engines: ENGINES } = useEngines("statistics");

/** What the planner knows of the entities: its row count, and whether it has statistics of their words. */
async function planned(store: Store): Promise<{ rows: number; words: boolean }> {
  const [row] = await store.db.query<{ rows: number; words: boolean }>(
    `SELECT (SELECT reltuples::float8 FROM pg_class WHERE relname = 'entities') AS rows,
            EXISTS (SELECT 1 FROM pg_stats WHERE tablename = 'entities' AND attname = 'search_names') AS words`,
  );
  return { rows: row?.rows ?? NaN, words: row?.words === true };
}

async function grow(store: Store, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) await store.record(result(`grown${i}.example`, at(1), `Grown Person ${i}`, []));
}

describe("the planner's statistics on PGlite", () => {
  let store: Store | undefined;
  afterEach(() => store?.close());

  it("are gathered once the entities recorded outgrow what the planner knows by over 50 and a tenth, and not again until they do", async () => {
    store = await openStore(await ENGINES[0]!.location(), () => undefined);
    await grow(store, 0, 40);
    // 40 entities, the planner knowing of none: within autovacuum's 50.
    expect(await statisticsBehind(store.db)).toBe(false);
    expect(await analyzeIfBehind(store.db)).toBe(false);
    await grow(store, 40, 30);
    expect(await statisticsBehind(store.db)).toBe(true);
    expect((await planned(store)).words).toBe(false);
    expect(await analyzeIfBehind(store.db)).toBe(true);
    expect(await planned(store)).toEqual({ rows: 70, words: true });
    // Counted: nothing to do until 50 + 7 more.
    expect(await analyzeIfBehind(store.db)).toBe(false);
    await grow(store, 70, 56);
    expect(await analyzeIfBehind(store.db)).toBe(false);
    await grow(store, 126, 2);
    expect(await analyzeIfBehind(store.db)).toBe(true);
    expect((await planned(store)).rows).toBe(128);
  }, 60_000);
});

describe("the planner's statistics on PostgreSQL", () => {
  it("are the server's autovacuum's: the store never analyzes them itself", async () => {
    const store = await openStore(await ENGINES[1]!.location(), () => undefined);
    try {
      await grow(store, 0, 70);
      expect(await analyzeIfBehind(store.db)).toBe(false);
      // No ANALYZE of the store's (autovacuum's own is `last_autoanalyze`).
      const [row] = await store.db.query<{ last: Date | null }>(
        "SELECT last_analyze AS last FROM pg_stat_user_tables WHERE relname = 'entities'",
      );
      expect(row).toEqual({ last: null });
    } finally {
      await store.close();
    }
  }, 60_000);
});
