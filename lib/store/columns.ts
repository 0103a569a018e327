/**
 * The columns of the index's claims table, written once (docs/decisions.md#the-index): the recorder
 * (./verdicts.ts) and the export and import (./export.ts) build their statements from this list, so a
 * column added to the table is added to each of them here.
 */

/** A column of a table, with its SQL type: what the engine reads it as, and how a line of an export writes it. */
export type Columns = readonly (readonly [name: string, type: "text" | "jsonb" | "integer" | "bigint" | "boolean" | "timestamptz"])[];

/** The claims table's columns, in the order of a claim's keys in an export file (after its entity's domain, which the line's entity gives). */
export const CLAIM_COLUMNS = [
  ["domain", "text"],
  ["kind", "text"],
  ["claim_key", "text"],
  ["id", "text"],
  ["label", "text"],
  ["issuer", "text"],
  ["issuer_name", "text"],
  ["present", "boolean"],
  ["verified", "boolean"],
  ["reason", "text"],
  ["stale_reason", "text"],
  ["stale_message", "text"],
  ["first_seen_at", "timestamptz"],
  ["last_checked_at", "timestamptz"],
  ["last_verified_at", "timestamptz"],
  ["verified_since", "timestamptz"],
  ["failing_since", "timestamptz"],
] as const satisfies Columns;

/** A claim's key in the table: its entity, its kind, and its id in lower case (or its place in the list). */
export const CLAIM_KEY = ["domain", "kind", "claim_key"] as const;

/** The names of `columns`, for a statement. */
export const names = (columns: Columns): string => columns.map(([c]) => c).join(", ");
