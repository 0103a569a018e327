/**
 * What the index last recorded of one entity, for its badge (docs/decisions.md#badges): its status and
 * how many of its claims verified. One read of the entities' primary key; nothing is fetched.
 */
import type { Queryable } from "./db.ts";

/** The entity's status at its last check, and its claims' counts as recorded at its last accepted check. */
export type Standing = { status: string; verified: number; unverified: number };

/** `domain`'s standing (lower-cased, as the index keys it); null when the index has never recorded it. */
export async function entityStanding(db: Queryable, domain: string): Promise<Standing | null> {
  const [row] = await db.query<Standing>("SELECT status, verified, unverified FROM entities WHERE domain = $1", [domain.toLowerCase()]);
  return row ? { status: row.status, verified: Number(row.verified), unverified: Number(row.unverified) } : null;
}
