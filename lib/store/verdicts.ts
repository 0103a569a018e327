/**
 * What the resolver remembers of each resolution (docs/decisions.md#the-index): per entity its last
 * status, per claim its verdict and the times of its current run, and every change of verdict.
 * `record` writes a resolution and returns it annotated with what the index knows (`since`,
 * `last_checked_at`, stale on error); the resolver itself never reads the store.
 */
import { z } from "zod";
import { boundedKey, CLAIM_KINDS, claimKey, listedOnce, type ClaimKind } from "../result/claims.ts";
import type { Claim, ClaimSince, EntityResult } from "../result/record.ts";
import { isTransientFailure } from "../fetch/transient.ts";
import { CLAIM_COLUMNS, CLAIM_KEY, names } from "./columns.ts";
import { extend } from "../objects.ts";
import {
  cut,
  keptId,
  keptMessage,
  MAX_DESCRIPTION_LENGTH,
  MAX_ID_BYTES,
  MAX_MESSAGE_LENGTH,
  MAX_NAME_LENGTH,
} from "../documents/display-limits.ts";
import type { Problem } from "../documents/problem.ts";
import { parseCredentialId } from "../protocol/ids.ts";
import type { Queryable } from "./db.ts";
import { FOLLOW_PERIOD_S, NEVER_ACCEPTED_RECHECKS, scheduleRecheck } from "./queue.ts";
import { appendChanges, type NewChange } from "./positions.ts";
import { searchColumns } from "./search-text.ts";

/**
 * JSON for a jsonb column. Publishers' text may hold a lone surrogate, which JSON.stringify escapes
 * (`\ud800`) and PostgreSQL refuses ("invalid input syntax for type json"), losing the whole record;
 * it is kept as U+FFFD instead, as the pages show it (docs/decisions.md#rendering).
 *
 * JSON.stringify writes a `\uDxxx` escape for a lone surrogate only (a pair is written as it is), and a
 * backslash of the text as `\\`: an escape is a `\u` after an even run of backslashes. One pass over
 * the text rather than a replacer that copies every object (docs/decisions.md#the-index).
 */
export function jsonb(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes("\\ud") || text.includes("\\uD") ? text.replace(ESCAPED_SURROGATE, "$1\\ufffd") : text;
}
const ESCAPED_SURROGATE = /(?<!\\)((?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g;

export { CLAIM_KINDS, claimCounts, claimKey, boundedKey, listedOnce, type ClaimKind } from "../result/claims.ts";

/** How long a verified claim survives failed re-checks: the protocol's staleness bound, 24 hours. */
export const STALE_FOR_MS = 24 * 3600_000;
/** Changes kept per entity, newest first (at least the last 50 per claim are asked for). */
export const CHANGES_KEPT = 500;

type ClaimRow = {
  kind: ClaimKind;
  claim_key: string;
  verified: boolean;
  reason: string | null;
  stale_reason: string | null;
  stale_message: string | null;
  first_seen_at: Date;
  last_checked_at: Date;
  last_verified_at: Date | null;
  verified_since: Date | null;
  failing_since: Date | null;
};

/**
 * A claim whose check failed for a reason that says nothing about the claim, only about the
 * publisher now (`isTransientFailure`): stale on error keeps the verdict through it (docs/decisions.md#the-index).
 */
export function isTransient(claim: Claim): boolean {
  return !claim.verified && isTransientFailure({ status: claim.reason ?? "", httpStatus: claim.http_status ?? null });
}

/** A Date's ISO text. Most dates of a record are its check's own `at`, one object: its text is kept. */
let lastDate: Date | null = null;
let lastText = "";
function isoOf(d: Date): string {
  if (d !== lastDate) {
    lastDate = d;
    lastText = d.toISOString();
  }
  return lastText;
}
const iso = (d: Date | null) => (d ? isoOf(d) : null);

/**
 * The most an index holds of what a claim is called (a property's name, a credential's title, its
 * issuer's name): what releases before kept, and so what an import takes. A check records it as a name,
 * at {@link MAX_NAME_LENGTH} (docs/decisions.md#the-index).
 */
export const MAX_LABEL_LENGTH = 500;

/**
 * A string at `path` in a claimed entry (untrusted JSON), or null; at a name's length. The index keeps
 * lengths; what shows the text cleans it (docs/decisions.md#rendering), as an export carries it.
 */
function textAt(value: unknown, ...path: string[]): string | null {
  let at = value;
  for (const key of path)
    at = at !== null && typeof at === "object" && !Array.isArray(at) ? (at as Record<string, unknown>)[key] : undefined;
  return typeof at === "string" && at.trim() !== "" ? cut(at, MAX_NAME_LENGTH) : null;
}

/**
 * An entity's details as the index keeps them: its description at a description's length, every other
 * field at a name's, cut as the pages cut them, so that the index never answers more, and an export of
 * it imports (docs/decisions.md#the-index).
 */
export function keptDetails(details: Record<string, string>): Record<string, string> {
  const over = (key: string, text: string) => text.length > (key === "description" ? MAX_DESCRIPTION_LENGTH : MAX_NAME_LENGTH);
  if (!Object.entries(details).some(([key, text]) => over(key, text))) return details;
  return Object.fromEntries(
    Object.entries(details).map(([key, text]) => [key, cut(text, key === "description" ? MAX_DESCRIPTION_LENGTH : MAX_NAME_LENGTH)]),
  );
}

/** Problems as the index keeps them: each message and detail at a message's length (docs/decisions.md#the-index). */
export function keptProblems(problems: Problem[]): Problem[] {
  const over = (p: Problem) => p.message.length > MAX_MESSAGE_LENGTH || (p.detail?.length ?? 0) > MAX_MESSAGE_LENGTH;
  if (!problems.some(over)) return problems;
  return problems.map((p) =>
    over(p) ? extend(p, { message: keptMessage(p.message), ...(p.detail === undefined ? {} : { detail: keptMessage(p.detail) }) }) : p,
  );
}

/** A claim's id as the index keeps it: at most {@link MAX_ID_BYTES} (a longer one was not read: docs/decisions.md#validation). */
const keptClaimId = (claim: Claim): string | null => (claim.id === null ? null : keptId(claim.id));

/** What a claim is called: a property's name, a credential's title. */
export const labelOf = (claim: Claim, kind: ClaimKind) =>
  kind === "properties" ? textAt(claim.claimed, "name") : kind === "credentials" ? textAt(claim.claimed, "title") : null;

/** The domain that issues a credential claim, from its id (docs/protocol.md#identifiers). */
export function issuerOf(claim: Claim, kind: ClaimKind): string | null {
  if (kind !== "credentials" || claim.id === null) return null;
  return parseCredentialId(claim.id)?.domain.toLowerCase() ?? null;
}

/** The name the holder gives a credential's issuing site. */
export const issuerNameOf = (claim: Claim, kind: ClaimKind) => (kind === "credentials" ? textAt(claim.claimed, "property", "name") : null);

/**
 * Records `result` as checked at `result.cache.fetched_at` and returns it annotated. A result no
 * newer than what is recorded (answered from the cache) writes nothing: it is annotated only, and `written` is false.
 */
export async function record(
  tx: Queryable,
  result: EntityResult,
  followS: number = FOLLOW_PERIOD_S,
): Promise<{ result: EntityResult; written: boolean }> {
  const domain = result.entity.domain;
  const at = new Date(result.cache.fetched_at);
  const { before, rows } = await readRecorded(tx, domain);
  if (before && before.last_checked_at.getTime() >= at.getTime())
    return { result: annotate(result, before.last_checked_at, rows), written: false };
  const plan = planClaims(result, rows, at);
  await writeEntity(tx, result, at, before, plan, followS);
  const status = before?.status === result.entity.status ? null : result.entity.status;
  const first = before === undefined;
  // An entity that is not accepted says nothing about its claims: their records stay as they were.
  if (result.entity.status !== "accepted") {
    await writeChanges(tx, { domain, at, first }, status, []);
    return { result: annotate(result, at, rows), written: true };
  }
  for (const { kind, key, next } of plan.checked) rows.set(`${kind} ${key}`, next);
  await writeClaims(tx, domain, at, plan.checked);
  await markWithdrawn(tx, domain, plan.listed, rows);
  // Last: the changes take their positions, and hold the counter until this commits (docs/decisions.md#the-order-of-changes).
  await writeChanges(tx, { domain, at, first }, status, plan.checked);
  return { result: annotate(result, at, rows), written: true };
}

type Recorded = { before: { last_checked_at: Date; status: string } | undefined; rows: Map<string, ClaimRow> };

/**
 * The entity's row (locked for this transaction) and its claims' rows, keyed `kind key`. An entity
 * the index does not hold has no claims to read: they go with its row (migration 1, ON DELETE CASCADE).
 */
async function readRecorded(tx: Queryable, domain: string): Promise<Recorded> {
  const [before] = await tx.query<{ last_checked_at: Date; status: string }>(
    "SELECT last_checked_at, status FROM entities WHERE domain = $1 FOR UPDATE",
    [domain],
  );
  if (!before) return { before, rows: new Map() };
  const rows = new Map(
    (await tx.query<ClaimRow>("SELECT * FROM claims WHERE domain = $1", [domain])).map((r) => [`${r.kind} ${r.claim_key}`, r]),
  );
  return { before, rows };
}

type Listed = { kind: ClaimKind; claim: Claim; key: string; prev: ClaimRow | undefined };
type Checked = Listed & { next: ClaimRow };
/** What this check says of each claim: every one listed, those checked with their next rows, and the count verified. */
type ClaimPlan = { listed: Listed[]; checked: Checked[]; unchecked: Listed[]; verified: number };

/** Each claim the entity lists, once, with its record before and (checked ones) after this check. */
function planClaims(result: EntityResult, rows: Map<string, ClaimRow>, at: Date): ClaimPlan {
  // A claim listed twice (the second is a `duplicate`) is one claim: the first listing is recorded.
  const listed: Listed[] =
    result.entity.status === "accepted"
      ? listedOnce(result).map(({ kind, claim, key }) => ({ kind, claim, key, prev: rows.get(`${kind} ${key}`) }))
      : [];
  // docs/decisions.md#the-index: a claim this resolver did not check (`not_checked`) keeps its record as it was.
  const checked = listed
    .filter((c) => c.claim.not_checked === undefined)
    .map((c) => extend(c, { next: nextRow(c.prev, c.claim, c.kind, c.key, at) }));
  const unchecked = listed.filter((c) => c.claim.not_checked !== undefined);
  const verified = checked.filter((c) => c.next.verified).length + unchecked.filter((c) => c.prev?.verified).length;
  return { listed, checked, unchecked, verified };
}

/** The entity's row, its search text, a change of its status, and its next re-check. */
async function writeEntity(
  tx: Queryable,
  result: EntityResult,
  at: Date,
  before: Recorded["before"],
  plan: ClaimPlan,
  followS: number,
): Promise<void> {
  const domain = result.entity.domain;
  const accepted = result.entity.status === "accepted";
  const details = keptDetails(result.entity.details ?? {});
  const [kept] = await tx.query<{ ever_accepted: boolean; failed_checks: number }>(
    `INSERT INTO entities (domain, status, network_id, entity_type, details, problems, verified, unverified, first_seen_at, last_checked_at,
       ever_accepted, failed_checks)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $2 = 'accepted', CASE WHEN $2 = 'accepted' THEN 0 ELSE 1 END)
     ON CONFLICT (domain) DO UPDATE SET status = $2, network_id = $3, entity_type = $4, details = $5, problems = $6,
       verified = CASE WHEN $2 = 'accepted' THEN $7 ELSE entities.verified END,
       unverified = CASE WHEN $2 = 'accepted' THEN $8 ELSE entities.unverified END,
       last_checked_at = $9,
       ever_accepted = entities.ever_accepted OR $2 = 'accepted',
       failed_checks = CASE WHEN $2 = 'accepted' THEN 0 ELSE entities.failed_checks + 1 END
     RETURNING ever_accepted, failed_checks`,
    [
      domain,
      result.entity.status,
      result.entity.network_id === undefined ? null : keptId(result.entity.network_id),
      result.entity.entity_type === undefined ? null : cut(result.entity.entity_type, MAX_NAME_LENGTH),
      jsonb(details),
      jsonb(keptProblems(result.entity.problems)),
      plan.verified,
      plan.listed.length - plan.verified,
      at.toISOString(),
    ],
  );
  // What an entity that is not accepted is called stays what it was last called.
  if (accepted || !before) await writeSearchText(tx, result, details, plan.listed);
  // docs/decisions.md#the-index: a domain never accepted is checked once and re-checked at most
  // NEVER_ACCEPTED_RECHECKS times; then it waits, out of the queue, to leave the index.
  if (kept && !kept.ever_accepted && kept.failed_checks > NEVER_ACCEPTED_RECHECKS) {
    await tx.query("DELETE FROM crawl_queue WHERE domain = $1", [domain]);
    return;
  }
  // docs/decisions.md#discovery: every indexed entity is re-verified in the background.
  const allVerified = accepted && plan.unchecked.length === 0 && plan.verified === plan.listed.length;
  await scheduleRecheck(tx, domain, at, allVerified, followS);
}

/** docs/decisions.md#search: names and domain weigh most, then what the claims are called, then the description; the name's words kept for typos. */
async function writeSearchText(tx: Queryable, result: EntityResult, details: Record<string, string>, listed: Listed[]): Promise<void> {
  const domain = result.entity.domain;
  const columns = searchColumns({
    name: details.name ?? null,
    domain,
    networkId: result.entity.network_id ?? null,
    claims: listed.flatMap(({ claim, kind }) => [labelOf(claim, kind), issuerNameOf(claim, kind)]),
    description: details.description ?? null,
  });
  await tx.query("UPDATE entities SET name = $2, description = $3, search = $4::tsvector, search_names = $5::tsvector WHERE domain = $1", [
    domain,
    details.name ?? null,
    details.description ?? null,
    columns.search,
    columns.search_names,
  ]);
  await addTypoTerms(tx, columns.names);
}

/** The terms of names the typo table (`search_words`) takes (docs/decisions.md#search): those of 3 letters or more. */
export const typoTerms = (terms: Iterable<string>): string[] => [...terms].filter((t) => [...t].length >= 3);

/** Terms of names into the typo table (docs/decisions.md#search): those of 3 letters or more. */
export async function addTypoTerms(tx: Queryable, terms: Iterable<string>): Promise<void> {
  const long = typoTerms(terms);
  if (long.length === 0) return;
  await tx.query("INSERT INTO search_words (word) SELECT DISTINCT unnest($1::text[]) ON CONFLICT DO NOTHING", [long]);
}

/** What the recorder writes each claim column from: the statement's own parameters, or the row given for the claim. */
const FROM_STATEMENT: ReadonlyMap<string, string> = new Map([
  ["domain", "$1"],
  ["present", "true"],
  ["last_checked_at", "$2"],
]);
/** A claim's first sighting stays what it was when its row is written again. */
const KEPT_ON_UPDATE = new Set<string>([...CLAIM_KEY, "first_seen_at"]);
const GIVEN = CLAIM_COLUMNS.filter(([c]) => !FROM_STATEMENT.has(c));

/**
 * Every checked claim's row, in one statement (docs/decisions.md#the-index), built from the claims
 * table's columns (./columns.ts).
 */
const WRITE_CLAIMS = `INSERT INTO claims (${names(CLAIM_COLUMNS)})
  SELECT ${CLAIM_COLUMNS.map(([c]) => FROM_STATEMENT.get(c) ?? c).join(", ")}
  FROM jsonb_to_recordset($3::jsonb) AS x(${GIVEN.map(([c, t]) => `${c} ${t}`).join(", ")})
  ON CONFLICT (${CLAIM_KEY.join(", ")}) DO UPDATE SET ${CLAIM_COLUMNS.filter(([c]) => !KEPT_ON_UPDATE.has(c))
    .map(([c]) => `${c} = excluded.${c}`)
    .join(", ")}`;

async function writeClaims(tx: Queryable, domain: string, at: Date, checked: Checked[]): Promise<void> {
  if (checked.length === 0) return;
  await tx.query(WRITE_CLAIMS, [
    domain,
    at.toISOString(),
    jsonb(
      checked.map(({ kind, key, claim, next }) => ({
        kind,
        claim_key: key,
        id: keptClaimId(claim),
        label: labelOf(claim, kind),
        issuer: issuerOf(claim, kind),
        issuer_name: issuerNameOf(claim, kind),
        verified: next.verified,
        reason: next.reason,
        stale_reason: next.stale_reason,
        stale_message: next.stale_message === null ? null : keptMessage(next.stale_message),
        first_seen_at: isoOf(next.first_seen_at),
        last_verified_at: iso(next.last_verified_at),
        verified_since: iso(next.verified_since),
        failing_since: iso(next.failing_since),
      })),
    ),
  ]);
}

/**
 * This check's changes of verdict: the entity's status when it turned, then each claim whose verdict
 * (or reason for failing) turned, at the next positions (./positions.ts), once the entity's oldest
 * changes past {@link CHANGES_KEPT} with them are removed: all but those a subscriber still waits for,
 * not yet handed out or not yet delivered (docs/notices.md#delivery), which stay until they are. An
 * entity checked for the `first` time has none to remove (its changes go with its row).
 */
async function writeChanges(
  tx: Queryable,
  { domain, at, first }: { domain: string; at: Date; first: boolean },
  status: string | null,
  checked: Checked[],
): Promise<void> {
  const when = at.toISOString();
  const changes: NewChange[] = checked
    .filter(({ prev, next }) => !prev || prev.verified !== next.verified || (!next.verified && prev.reason !== next.reason))
    .map(({ kind, key, claim, next }) => ({
      domain,
      kind,
      claim_key: key,
      id: keptClaimId(claim),
      at: when,
      verified: next.verified,
      status: null,
      reason: next.reason,
    }));
  if (status !== null) changes.unshift({ domain, kind: "entity", claim_key: "", id: null, at: when, verified: null, status, reason: null });
  if (changes.length === 0) return;
  if (!first) await pruneChanges(tx, domain, changes.length);
  await appendChanges(tx, changes, jsonb);
}

/** The entity's oldest changes past {@link CHANGES_KEPT}, with `adding` more to come, but those a subscriber waits for. */
async function pruneChanges(tx: Queryable, domain: string, adding: number): Promise<void> {
  await tx.query(
    `DELETE FROM changes WHERE domain = $1
       AND seq < coalesce((SELECT min(seq) FROM (SELECT seq FROM changes WHERE domain = $1 ORDER BY seq DESC LIMIT $2) kept), $3::bigint)
       AND (position IS NULL OR position <= (SELECT last FROM notice_cursor))
       AND NOT EXISTS (SELECT 1 FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
         WHERE d.position = changes.position AND d.outcome IS NULL AND s.state = 'active')`,
    [domain, Math.max(0, CHANGES_KEPT - adding), "9223372036854775807"],
  );
}

/** Claims recorded before that the entity no longer lists: kept, as no longer present. */
async function markWithdrawn(tx: Queryable, domain: string, listed: Listed[], rows: Map<string, ClaimRow>): Promise<void> {
  const present = new Set(listed.map((c) => `${c.kind} ${c.key}`));
  const withdrawn = [...rows.keys()].filter((k) => !present.has(k));
  if (withdrawn.length === 0) return;
  await tx.query("UPDATE claims SET present = false WHERE domain = $1 AND kind || ' ' || claim_key = ANY($2::text[])", [domain, withdrawn]);
}

/** Whether a verified claim keeps its verdict through this failed re-check (stale on error). */
function keepsVerdict(prev: ClaimRow | undefined, claim: Claim, at: Date): prev is ClaimRow & { last_verified_at: Date } {
  return Boolean(
    prev?.verified && prev.last_verified_at && isTransient(claim) && at.getTime() - prev.last_verified_at.getTime() < STALE_FOR_MS,
  );
}

/** The claim's record after this check. */
function nextRow(prev: ClaimRow | undefined, claim: Claim, kind: ClaimKind, key: string, at: Date): ClaimRow {
  const first_seen_at = prev?.first_seen_at ?? at;
  if (keepsVerdict(prev, claim, at)) {
    const problem = claim.problems.find((p) => p.code === claim.reason);
    const stale = { stale_reason: claim.reason ?? null, stale_message: problem?.message ?? null };
    return extend(prev, { kind, claim_key: key, first_seen_at, last_checked_at: at, ...stale });
  }
  const stay = prev !== undefined && prev.verified === claim.verified;
  return {
    kind,
    claim_key: key,
    first_seen_at,
    last_checked_at: at,
    verified: claim.verified,
    reason: claim.verified ? null : (claim.reason ?? null),
    stale_reason: null,
    stale_message: null,
    last_verified_at: claim.verified ? at : (prev?.last_verified_at ?? null),
    verified_since: claim.verified ? (stay ? prev.verified_since : at) : null,
    failing_since: claim.verified ? null : stay ? prev.failing_since : at,
  };
}

/** `result` with what the index knows: each claim's times, stale verdicts, the entity's last check. */
function annotate(result: EntityResult, checkedAt: Date, rows: Map<string, ClaimRow>): EntityResult {
  const out: EntityResult = extend(result, { entity: extend(result.entity, { last_checked_at: checkedAt.toISOString() }) });
  if (result.entity.status !== "accepted") return out;
  for (const kind of CLAIM_KINDS)
    out[kind] = result[kind].map((claim, i) => annotateClaim(claim, rows.get(`${kind} ${claimKey(claim, i)}`)));
  return out;
}

/** One claim with its record's times, and stale on error. */
function annotateClaim(claim: Claim, row: ClaimRow | undefined): Claim {
  if (!row) return claim;
  const since: ClaimSince = { first_seen_at: isoOf(row.first_seen_at), last_checked_at: isoOf(row.last_checked_at) };
  if (row.last_verified_at) since.last_verified_at = isoOf(row.last_verified_at);
  if (row.verified_since) since.verified_since = isoOf(row.verified_since);
  if (row.failing_since) since.failing_since = isoOf(row.failing_since);
  const annotated: Claim = extend(claim, { since });
  if (row.verified && !claim.verified && row.stale_reason && row.last_verified_at && isTransient(claim)) {
    const stale = {
      reason: claim.reason ?? "unreachable",
      message: row.stale_message ?? "",
      until: new Date(row.last_verified_at.getTime() + STALE_FOR_MS).toISOString(),
    };
    const kept: Claim = extend(annotated, { verified: true, stale });
    delete kept.reason; // present exactly when not verified
    return kept;
  }
  return annotated;
}

/**
 * What `record` will say of each claim of a check at `at`, before the check is whole: for a page
 * whose cards arrive one by one (docs/decisions.md#the-index). Reads the entity's records once;
 * writes nothing.
 */
export async function preview(db: Queryable, domain: string, at: Date): Promise<(kind: ClaimKind, claim: Claim, index: number) => Claim> {
  const [entity] = await db.query<{ last_checked_at: Date }>("SELECT last_checked_at FROM entities WHERE domain = $1", [domain]);
  const rows = new Map(
    (await db.query<ClaimRow>("SELECT * FROM claims WHERE domain = $1", [domain])).map((r) => [`${r.kind} ${r.claim_key}`, r]),
  );
  const recorded = entity !== undefined && entity.last_checked_at.getTime() >= at.getTime();
  return (kind, claim, index) => {
    const key = claimKey(claim, index);
    const prev = rows.get(`${kind} ${key}`);
    return annotateClaim(claim, recorded || claim.not_checked !== undefined ? prev : nextRow(prev, claim, kind, key, at));
  };
}

/** One recorded change, newest first in `history`. */
export const Change = z.object({
  at: z.string(),
  kind: z.enum(["entity", ...CLAIM_KINDS]),
  id: z.string().nullable(),
  status: z.string().optional(),
  verified: z.boolean().optional(),
  reason: z.string().optional(),
});
export type Change = z.infer<typeof Change>;

export const HISTORY_SCHEMA = "ident-resolver/history@1";

/** `/api/entity/{domain}/history` (docs/api.md): an entity's recorded changes, newest first. */
export const History = z.object({
  schema: z.literal(HISTORY_SCHEMA),
  domain: z.string(),
  last_checked_at: z.string(),
  changes: z.array(Change),
});
export type History = z.infer<typeof History>;

/** The recorded changes of an entity, newest first; null when the index does not know it. */
export async function history(db: Queryable, domain: string, limit = 200): Promise<History | null> {
  // One statement: the entity's row, and its changes beside it (none: one row of nulls).
  const rows = await db.query<{
    last_checked_at: Date;
    at: Date | null;
    kind: Change["kind"] | null;
    id: string | null;
    status: string | null;
    verified: boolean | null;
    reason: string | null;
  }>(
    `SELECT e.last_checked_at, c.at, c.kind, c.id, c.status, c.verified, c.reason
     FROM entities e LEFT JOIN LATERAL (
       SELECT at, kind, id, status, verified, reason, seq FROM changes WHERE domain = e.domain ORDER BY at DESC, seq DESC LIMIT $2
     ) c ON true
     WHERE e.domain = $1 ORDER BY c.at DESC, c.seq DESC`,
    [domain, limit],
  );
  const [entity] = rows;
  if (!entity) return null;
  const changes: Change[] = [];
  for (const r of rows) {
    if (r.at === null || r.kind === null) continue;
    changes.push({
      at: r.at.toISOString(),
      kind: r.kind,
      id: r.id,
      ...(r.status !== null ? { status: r.status } : {}),
      ...(r.verified !== null ? { verified: r.verified } : {}),
      ...(r.reason !== null ? { reason: r.reason } : {}),
    });
  }
  return { schema: HISTORY_SCHEMA, domain, last_checked_at: entity.last_checked_at.toISOString(), changes };
}

/**
 * Every entity's search columns and the typo table made again by this folding (docs/decisions.md#search,
 * migration 7), a batch of 5,000 entities at a time, in the caller's transaction.
 */
export async function reindexSearch(tx: Queryable): Promise<void> {
  await tx.query("TRUNCATE search_words");
  let after = "";
  for (;;) {
    const rows = await tx.query<{
      domain: string;
      name: string | null;
      network_id: string | null;
      description: string | null;
      claims: string[];
    }>(
      `SELECT e.domain, e.name, e.network_id, e.description,
         coalesce((SELECT array_agg(concat_ws(' ', c.label, c.issuer_name)) FROM claims c WHERE c.domain = e.domain AND c.present), '{}') AS claims
       FROM entities e WHERE e.domain > $1 ORDER BY e.domain LIMIT 5000`,
      [after],
    );
    if (rows.length === 0) return;
    const names = new Set<string>();
    const columns = rows.map((r) => {
      const c = searchColumns({
        name: r.name,
        domain: r.domain,
        networkId: r.network_id,
        claims: r.claims,
        description: r.description,
      });
      for (const w of c.names) names.add(w);
      return c;
    });
    await tx.query(
      `UPDATE entities SET search = x.search::tsvector, search_names = x.search_names::tsvector
       FROM unnest($1::text[], $2::text[], $3::text[]) AS x (domain, search, search_names) WHERE entities.domain = x.domain`,
      [rows.map((r) => r.domain), columns.map((c) => c.search), columns.map((c) => c.search_names)],
    );
    await addTypoTerms(tx, names);
    after = rows[rows.length - 1]?.domain ?? after;
  }
}

/** Rows of a migration's pass read at a time. */
const BATCH = 500;

/** Every row `read` gives, a batch at a time in the order of its key, each handed to `each`. */
async function inBatches<R, K>(first: K, read: (after: K) => Promise<R[]>, keyOf: (row: R) => K, each: (row: R) => Promise<void>) {
  for (let after = first; ;) {
    const rows = await read(after);
    for (const r of rows) await each(r);
    const last = rows.at(-1);
    if (last === undefined || rows.length < BATCH) return;
    after = keyOf(last);
  }
}

type KeptClaim = { domain: string; kind: string; claim_key: string; id: string | null; stale_message: string | null };
type KeptEntity = {
  domain: string;
  network_id: string | null;
  entity_type: string | null;
  details: Record<string, string>;
  problems: Problem[];
};

/**
 * What an index recorded before its lengths were kept, cut to them (docs/decisions.md#the-index,
 * migration 9): claims keyed longer than a key takes re-keyed with their changes, and every id,
 * entity type, network_id, detail and message longer than it is kept cut as the recorder cuts it now.
 * Only the rows over a length are read, a batch at a time, in the order of their key.
 */
export async function keepLengths(tx: Queryable): Promise<void> {
  await inBatches(
    ["", "", ""],
    (after) =>
      tx.query<KeptClaim>(
        `SELECT domain, kind, claim_key, id, stale_message FROM claims
         WHERE (octet_length(claim_key) > $4 OR octet_length(id) > $5 OR char_length(stale_message) > $6) AND (domain, kind, claim_key) > ($1, $2, $3)
         ORDER BY domain, kind, claim_key LIMIT ${BATCH}`,
        [...after, Math.floor(MAX_ID_BYTES / 6), MAX_ID_BYTES, MAX_MESSAGE_LENGTH],
      ),
    (r) => [r.domain, r.kind, r.claim_key],
    async (r) => {
      const key = boundedKey(r.claim_key);
      const where = [r.domain, r.kind, r.claim_key];
      const stale = r.stale_message === null ? null : keptMessage(r.stale_message);
      const id = r.id === null ? null : keptId(r.id);
      await tx.query("UPDATE claims SET claim_key = $4, id = $5, stale_message = $6 WHERE domain = $1 AND kind = $2 AND claim_key = $3", [
        ...where,
        key,
        id,
        stale,
      ]);
      if (key !== r.claim_key)
        await tx.query("UPDATE changes SET claim_key = $4 WHERE domain = $1 AND kind = $2 AND claim_key = $3", [...where, key]);
    },
  );
  await inBatches(
    "0",
    (after) =>
      tx.query<{ seq: string; id: string }>(
        `SELECT seq::text AS seq, id FROM changes WHERE octet_length(id) > $2 AND seq > $1::bigint ORDER BY seq LIMIT ${BATCH}`,
        [after, MAX_ID_BYTES],
      ),
    (r) => r.seq,
    async (r) => void (await tx.query("UPDATE changes SET id = $2 WHERE seq = $1::bigint", [r.seq, keptId(r.id)])),
  );
  await inBatches(
    "",
    (after) => entitiesOverLengths(tx, after),
    (r) => r.domain,
    (r) => keepEntity(tx, r),
  );
}

/** The next batch of entities whose entity type, network_id, details or problems are over their lengths. */
const entitiesOverLengths = (tx: Queryable, after: string) =>
  tx.query<KeptEntity>(
    `SELECT domain, network_id, entity_type, details, problems FROM entities
     WHERE domain > $1 AND (octet_length(network_id) > $2 OR char_length(entity_type) > $3
       OR EXISTS (SELECT 1 FROM jsonb_each_text(CASE WHEN jsonb_typeof(details) = 'object' THEN details ELSE '{}' END) d
                  WHERE char_length(d.value) > CASE WHEN d.key = 'description' THEN $4 ELSE $3 END)
       OR EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(problems) = 'array' THEN problems ELSE '[]' END) p
                  WHERE char_length(p->>'message') > $5 OR char_length(p->>'detail') > $5))
     ORDER BY domain LIMIT ${BATCH}`,
    [after, MAX_ID_BYTES, MAX_NAME_LENGTH, MAX_DESCRIPTION_LENGTH, MAX_MESSAGE_LENGTH],
  );

/** One entity's text cut as the recorder cuts it (`keepLengths`). */
async function keepEntity(tx: Queryable, r: KeptEntity): Promise<void> {
  await tx.query("UPDATE entities SET network_id = $2, entity_type = $3, details = $4, problems = $5 WHERE domain = $1", [
    r.domain,
    r.network_id === null ? null : keptId(r.network_id),
    r.entity_type === null ? null : cut(r.entity_type, MAX_NAME_LENGTH),
    jsonb(keptDetails(r.details)),
    jsonb(keptProblems(r.problems)),
  ]);
}
