/** What runs statements, in the engine of either kind (lib/store/db.ts): a row, and one statement at a time. */
export type Row = Record<string, unknown>;

/** Runs one statement; what a transaction hands its body too. */
export interface Queryable {
  query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<T[]>;
}
