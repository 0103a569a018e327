/**
 * The order of changes (docs/decisions.md#the-order-of-changes): every change of verdict takes a
 * position, 1, 2, 3, … in the order the changes were committed, whatever the checks' durations or the
 * instances' clocks, so that a reader who pages by position (lib/store/overview.ts) sees every change
 * once. The counter (`change_positions.last`, migration 10) is one row, locked by the transaction that
 * takes positions from it until that transaction ends: the next one takes its positions only once
 * the one before has committed (or rolled back, giving its positions back), so position order is
 * commit order on a PostgreSQL server shared by a fleet as on the embedded engine.
 */
import type { Queryable } from "./db.ts";

/** A change of verdict as the recorder writes it (the columns of `changes`). */
export type NewChange = {
  domain: string;
  kind: string;
  claim_key: string;
  id: string | null;
  at: string;
  verified: boolean | null;
  status: string | null;
  reason: string | null;
};

/**
 * With the counter held at `$1` (its last position): positions for the changes written without one
 * (`position IS NULL`) and committed, in the order the feed had before positions (time, entity, kind,
 * claim): what an older release wrote while a fleet was upgraded, an import's changes of a file of
 * the older format, a merge's; then the rows of `$2` (jsonb, in their order) at the next positions;
 * then the counter moved past them all. One statement, after the one that locked the counter, so
 * that its snapshot holds every change committed before. An unplaced row another transaction holds
 * (deleting it while it waits for the counter) is left to it: waiting for it would be a deadlock, and
 * a row it keeps after all is placed by the next recording.
 */
const APPEND = `
  WITH free AS (
    SELECT seq, at, domain, kind, claim_key FROM changes WHERE position IS NULL FOR UPDATE SKIP LOCKED
  ), unplaced AS (
    SELECT seq, row_number() OVER (ORDER BY at, domain, kind, claim_key, seq) AS n FROM free
  ), placed AS (
    UPDATE changes SET position = $1::bigint + u.n FROM unplaced u WHERE changes.seq = u.seq RETURNING 1
  ), added AS (
    INSERT INTO changes (domain, kind, claim_key, id, at, verified, status, reason, position)
    SELECT domain, kind, claim_key, id, at, verified, status, reason, $1::bigint + (SELECT count(*) FROM unplaced) + n
    FROM jsonb_to_recordset($2::jsonb) AS x(n integer, domain text, kind text, claim_key text, id text, at timestamptz,
      verified boolean, status text, reason text)
    ORDER BY n
    RETURNING 1
  )
  UPDATE change_positions SET last = $1::bigint + (SELECT count(*) FROM unplaced) + (SELECT count(*) FROM added)`;

/** The counter, locked until the caller's transaction ends: the position of the last change committed. */
async function takeCounter(tx: Queryable): Promise<number> {
  const [row] = await tx.query<{ last: string }>("SELECT last::text AS last FROM change_positions FOR UPDATE");
  if (!row) throw new Error("the store has no counter of changes (migration 10)");
  return Number(row.last);
}

/**
 * Writes `changes` (in their order) at the next positions, and any change committed without one
 * before them; `json` writes the rows for a jsonb parameter (publishers' text: lib/store/verdicts.ts).
 * The caller's transaction holds the counter from here until it ends: these are its last statements
 * (docs/decisions.md#the-order-of-changes), so that it holds it for them and the commit alone, and
 * takes no lock another recording could hold while it waits for the counter.
 */
export async function appendChanges(tx: Queryable, changes: readonly NewChange[], json: (rows: unknown) => string): Promise<void> {
  if (changes.length === 0) return;
  const last = await takeCounter(tx);
  await tx.query(APPEND, [String(last), json(changes.map((c, i) => Object.assign({ n: i + 1 }, c)))]);
}

/**
 * Places every change committed without a position, after the counter's last (an import's, at its
 * end: its last statements, as for {@link appendChanges}). `atLeast` raises the counter first: an
 * import into a new store takes the file's counter, which may be past its last change (the newest
 * ones pruned), so that every cursor of the exported index goes on.
 */
export async function placeChanges(tx: Queryable, atLeast = 0): Promise<void> {
  const last = Math.max(await takeCounter(tx), atLeast);
  await tx.query(APPEND, [String(last), "[]"]);
}

/** The counter's last position, as the caller's snapshot sees it. */
export async function lastPosition(db: Queryable): Promise<number> {
  const [row] = await db.query<{ last: string }>("SELECT last::text AS last FROM change_positions");
  return Number(row?.last ?? 0);
}
