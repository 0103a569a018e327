/**
 * The plans of the scale bench's reads (bench/scale.ts), as the engine ran them: one search of each
 * kind and the largest issuer's members, every statement they send shown by `EXPLAIN (ANALYZE,
 * BUFFERS)` before it runs (docs/decisions.md#search-at-size). A change of plan is checked here, not
 * guessed. PostgreSQL only: the embedded store is the app's while it runs.
 */
import type { Db, Queryable, Row, Tx } from "ident-resolver/store";
import { searchTexts } from "./scale-reads";

/** Statements whose plan says something: reads, not settings or the search's own estimates. */
const explainable = (sql: string) => /^\s*(WITH|SELECT)\b/i.test(sql) && !/set_config|pg_class|^\s*SELECT 1\s*$/i.test(sql);

/** `q`, whose every read is first run under EXPLAIN (ANALYZE, BUFFERS), its plan kept in `plans`. */
function explaining<Q extends Queryable>(q: Q, plans: string[][]): Q {
  return Object.assign(Object.create(q) as Q, {
    async query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<T[]> {
      if (explainable(sql)) {
        const rows = await q.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
        plans.push([`-- ${sql.replace(/\s+/g, " ").slice(0, 150)}`, ...rows.map((r) => r["QUERY PLAN"])]);
      }
      return q.query<T>(sql, params);
    },
  });
}

/** `db` whose transactions hand out explaining statements. */
function explainingDb(db: Db, plans: string[][]): Db {
  const outer = explaining(db, plans);
  return Object.assign(outer, {
    engine: db.engine,
    transaction: <T>(body: (tx: Tx) => Promise<T>) => db.transaction((tx) => body(explaining(tx, plans))),
  });
}

/** The plans of one search of each kind and of the largest issuer's page, as lines to print. */
export async function planFigures(url: string, n: number): Promise<string[]> {
  const { issuedBy, openStore, searchIndex } = await import("ident-resolver/store");
  const store = await openStore({ kind: "server", url });
  const lines: string[] = [];
  try {
    const show = async (label: string, run: (db: Db) => Promise<unknown>) => {
      const plans: string[][] = [];
      const t0 = performance.now();
      await run(explainingDb(store.db, plans));
      lines.push(`plan of ${label} (${plans.length} statements, ${(performance.now() - t0).toFixed(0)} ms with their EXPLAINs):`);
      for (const p of plans) lines.push(...p.map((l) => `    ${l}`));
    };
    for (const [kind, texts] of Object.entries(searchTexts(n, 8))) {
      const text = texts[7] ?? "";
      await show(`a search, ${kind} (${JSON.stringify(text)})`, (db) => searchIndex(db, text));
    }
    await show("the largest issuer's members (guild.example)", (db) => issuedBy(db, "guild.example"));
    const next = (await issuedBy(store.db, "guild.example"))?.next ?? null;
    if (next) await show("its second page, after the first", (db) => issuedBy(db, "guild.example", next));
  } finally {
    await store.close();
  }
  return lines;
}
