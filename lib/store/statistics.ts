/**
 * The planner's statistics on the embedded engine (docs/decisions.md#search-at-size). A PostgreSQL
 * server's autovacuum analyzes a table once a tenth of it has changed; the embedded engine has no
 * autovacuum, so a store grown by lookups and discovery, never imported, was searched as if it were
 * empty: `reltuples` 0 (the size a search weighs its two ways to read by) and no statistics of its
 * words. Autovacuum's rule is applied here to the count of entities the index keeps
 * (docs/decisions.md#the-home-page), not to each table's changes, which the embedded engine does
 * not report: a store that grows or shrinks is counted again; one whose rows change at a steady
 * size is not.
 */
import type { Db, Queryable } from "./db.ts";

/** The tables the index's reads are planned on; an import counts the same ones at its end. */
export const PLANNED_TABLES = "entities, claims, changes, crawl_queue, search_words";

/** How often an open embedded store looks whether its statistics are behind. */
const STATISTICS_EVERY_MS = 60_000;

/** Whether the entities counted and those the planner plans for differ by more than autovacuum lets a table change unanalyzed. */
export async function statisticsBehind(db: Queryable): Promise<boolean> {
  const [row] = await db.query<{ planned: number; counted: number }>(
    `SELECT (SELECT greatest(reltuples, 0)::float8 FROM pg_class WHERE relname = 'entities') AS planned,
            (SELECT coalesce(sum(value), 0)::float8 FROM index_counts WHERE name = 'entities') AS counted`,
  );
  const planned = row?.planned ?? 0;
  // autovacuum_analyze_threshold and autovacuum_analyze_scale_factor, at PostgreSQL's defaults.
  return Math.abs((row?.counted ?? 0) - planned) > 50 + 0.1 * planned;
}

/** On the embedded engine, the index's tables analyzed when their statistics are behind; whether they were. */
export async function analyzeIfBehind(db: Db): Promise<boolean> {
  if (db.engine !== "pglite" || !(await statisticsBehind(db))) return false;
  await db.query(`ANALYZE ${PLANNED_TABLES}`);
  return true;
}

/**
 * Looks every {@link STATISTICS_EVERY_MS} whether the embedded engine's statistics are behind, one look
 * at a time (behind a long transaction, an import, the minutes do not queue up); nothing on a server.
 * Answers how to stop looking.
 */
export function keepStatistics(db: Db): () => void {
  if (db.engine !== "pglite") return () => undefined;
  let looking: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    looking ??= analyzeIfBehind(db)
      .catch(() => undefined)
      .finally(() => (looking = null));
  }, STATISTICS_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
