/**
 * The whole index as NDJSON, and back (docs/deploying.md#moving-the-index): the way from the embedded
 * store to PostgreSQL, from one server to another, and back. A first line names the format and
 * counts what follows; then one line per entity (its row, its claims with their times, its changes
 * of verdict, oldest first) in domain order, then one line per queued job in domain order. Times are
 * UTC, keys in a fixed order, domains in byte order (`COLLATE "C"`, whatever the server's locale), so
 * the file of an index is the same whichever store it came from: two exports compare with `cmp`.
 *
 * What the index derives (its search columns, the words of names) is not in the file: the import
 * works it out again, as recording a check does.
 */
import { recount } from "./migrations.ts";
import { CLAIM_COLUMNS, names, type Columns } from "./columns.ts";
import { z } from "zod";
import { cut, keptId, MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH } from "../documents/display-limits.ts";
import { DEFAULTS } from "../limits.ts";
import { isDomain } from "../protocol/ids.ts";
import { EntityStatus, Reason } from "../result/record.ts";
import type { Db, Tx } from "./db.ts";
import { copyLine, CopyReader, isoTime, sqlLiteral, type CopyValue } from "./copy-text.ts";
import { PRIORITY, RECHECK_OK_S, type JobReason } from "./queue.ts";
import { addTypoTerms, boundedKey, CLAIM_KINDS, jsonb, MAX_LABEL_LENGTH, typoTerms } from "./verdicts.ts";
import { searchColumns } from "./search-text.ts";
import { lastPosition, placeChanges } from "./positions.ts";
import { PLANNED_TABLES } from "./statistics.ts";

export const EXPORT_SCHEMA = "ident-resolver/export@1";

/** A change's position (docs/decisions.md#the-order-of-changes): a whole number a JavaScript number holds exactly. */
const Position = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

const Counted = z.strictObject({
  entities: z.number().int().min(0),
  claims: z.number().int().min(0),
  changes: z.number().int().min(0),
  jobs: z.number().int().min(0),
});
export const ExportHeader = z.strictObject({
  schema: z.literal(EXPORT_SCHEMA),
  counts: Counted,
  /**
   * The position of the last change the index recorded, pruned since or not: its cursors go up to it
   * (docs/decisions.md#the-order-of-changes). A file written before positions has none.
   */
  last_position: Position.or(z.literal(0)).optional(),
});
export type ExportHeader = z.infer<typeof ExportHeader>;

/*
 * What an import takes (docs/deploying.md#what-an-import-refuses): what the live resolver could
 * have recorded, nothing else. A line that asks more is refused with its number and its field.
 */

/** How far ahead of this machine's clock a time of the file may be: two clocks' skew. */
export const CLOCK_SKEW_MS = 5 * 60_000;
/** No index holds a time before this day: the protocol and this resolver did not exist. */
export const EARLIEST_TIME = "2020-01-01T00:00:00.000Z";
const EARLIEST_MS = Date.parse(EARLIEST_TIME);
/** The engine's `integer` (int4): the type of every number of the tables the file carries (lib/store/migrations.ts). */
const INT4_MAX = 2_147_483_647;
/** The longest text of any field: the largest document the resolver reads, whence every text of an index comes. */
const MAX_TEXT_CHARS = DEFAULTS.maxBytes.html;

/** Whether `text` has at most `max` characters as the pages count them (code points, each one or two UTF-16 units). */
function within(text: string, max: number): boolean {
  if (text.length <= max) return true;
  if (text.length > 2 * max) return false;
  let n = 0;
  for (let i = 0; i < text.length; i++, n++) {
    if (n === max) return false;
    const c = text.charCodeAt(i);
    // A surrogate pair is one character.
    if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return true;
}
const thousands = (n: number) => n.toLocaleString("en-US");

/**
 * A domain as a lookup takes it (docs/decisions.md#queries): the protocol's domain (isDomain, which
 * a query's domain goes through), in lower case as a query makes it. No IP address, `localhost`,
 * path, port or control character is one.
 */
const isLookupDomain = (text: string): boolean => isDomain(text) && text.toLowerCase() === text;
const notADomain = (text: string) =>
  `${JSON.stringify(text.slice(0, 100))} is not a domain as a lookup takes it (lower case; no path, port, address or control character)`;

/** What the index keeps of a text: a name's, a description's, what a claim is called, any other. */
const KEPT = {
  name: { max: MAX_NAME_LENGTH, says: `longer than the ${thousands(MAX_NAME_LENGTH)} characters the index keeps of a name` },
  description: {
    max: MAX_DESCRIPTION_LENGTH,
    says: `longer than the ${thousands(MAX_DESCRIPTION_LENGTH)} characters the index keeps of a description`,
  },
  label: {
    max: MAX_LABEL_LENGTH,
    says: `longer than the ${thousands(MAX_LABEL_LENGTH)} characters the index keeps of what a claim is called`,
  },
  text: { max: MAX_TEXT_CHARS, says: `longer than any document the resolver reads (${thousands(MAX_TEXT_CHARS)} characters)` },
} as const;

/** A count or number of the tables: a whole number the engine's `integer` holds. */
const Count = z
  .number()
  .int()
  .min(0)
  .max(INT4_MAX, { error: `larger than the index's numbers hold (${thousands(INT4_MAX)})` });
const Time = z.iso.datetime({ offset: false });

/** The first 19 characters of an ISO time, to the second: the text of a time in the file compares with it as time does. */
const toSecond = (ms: number) => new Date(ms).toISOString().slice(0, 19);
const EARLIEST_SECOND = toSecond(EARLIEST_MS);

const JOB_REASONS = Object.keys(PRIORITY) as [JobReason, ...JobReason[]];
const PRIORITIES = Object.values(PRIORITY);

/**
 * A claim's key and an id as the index keeps them (docs/decisions.md#the-index): a file an older
 * release wrote may hold keys no btree row takes ("index row requires 12064 bytes"), which would fail
 * the whole import; they are bounded as a record bounds them, the same way in claims and changes.
 */
const KeptKey = z.string().transform(boundedKey);
const KeptId = z
  .string()
  .nullable()
  .transform((id) => (id === null ? null : keptId(id)));

/** The shape of the lines, every value typed (so nothing nests deeper than this) and every closed set its own. */
const EntityShape = z.strictObject({
  entity: z.strictObject({
    domain: z.string(),
    status: EntityStatus,
    network_id: KeptId,
    entity_type: z
      .string()
      .nullable()
      .transform((t) => (t === null ? null : cut(t, MAX_NAME_LENGTH))),
    details: z.record(z.string(), z.string()),
    problems: z.array(
      z.strictObject({
        code: z.string(),
        severity: z.enum(["error", "warning"]),
        message: z.string(),
        path: z.string().optional(),
        detail: z.string().optional(),
      }),
    ),
    verified: Count,
    unverified: Count,
    first_seen_at: Time,
    last_checked_at: Time,
    name: z.string().nullable(),
    description: z.string().nullable(),
    ever_accepted: z.boolean(),
    failed_checks: Count,
  }),
  claims: z.array(
    z.strictObject({
      kind: z.enum(CLAIM_KINDS),
      claim_key: KeptKey,
      id: KeptId,
      label: z.string().nullable(),
      issuer: z.string().nullable(),
      issuer_name: z.string().nullable(),
      present: z.boolean(),
      verified: z.boolean(),
      reason: Reason.nullable(),
      stale_reason: Reason.nullable(),
      stale_message: z.string().nullable(),
      first_seen_at: Time,
      last_checked_at: Time,
      last_verified_at: Time.nullable(),
      verified_since: Time.nullable(),
      failing_since: Time.nullable(),
    }),
  ),
  changes: z.array(
    z.strictObject({
      kind: z.enum(["entity", ...CLAIM_KINDS]),
      claim_key: KeptKey,
      id: KeptId,
      at: Time,
      verified: z.boolean().nullable(),
      status: EntityStatus.nullable(),
      reason: Reason.nullable(),
      /**
       * Its place in the order of changes (docs/decisions.md#the-order-of-changes); null for one its
       * store had not placed yet, absent in a file written before positions: the import places those.
       */
      position: Position.nullable().optional(),
    }),
  ),
});
const JobShape = z.strictObject({
  job: z.strictObject({
    domain: z.string(),
    reason: z.enum(JOB_REASONS),
    priority: z
      .number()
      .int()
      .min(Math.min(...PRIORITIES))
      .max(Math.max(...PRIORITIES)),
    due_at: Time,
    backoff_s: z.number().int().min(0).max(RECHECK_OK_S),
    attempts: Count,
    queued_at: Time,
  }),
});

export type ExportEntity = z.infer<typeof EntityShape>;
export type ExportJob = z.infer<typeof JobShape>;

/** Where a line goes past what the index could hold, and how. */
type OutOfBounds = { path: (string | number)[]; message: string };

/**
 * The bounds of the lines an import reads at `now`, one function a kind of line, run once its shape
 * is checked (an import checks millions of values): every time from {@link EARLIEST_TIME} to `now`
 * and {@link CLOCK_SKEW_MS}, a job's next run up to the queue's longest wait after that; domains as
 * a lookup takes them; texts no longer than the index keeps ({@link KEPT}). Times are compared as
 * text, to the second: the format makes the order of the texts the order of the times. Each answers
 * the first value out of bounds, or null.
 */
function boundsAt(now: number) {
  const latest = now + CLOCK_SKEW_MS;
  const limits: Limits = {
    // Whatever follows the second ("Z", ".5Z") sorts below "~".
    below: `${toSecond(latest)}~`,
    dueBelow: `${toSecond(latest + RECHECK_OK_S * 1000)}~`,
    ahead: `${toSecond(latest)}Z, this machine's time and ${CLOCK_SKEW_MS / 60_000} minutes: a check cannot come from the future`,
    dueAhead: `${toSecond(latest + RECHECK_OK_S * 1000)}Z, a day from now, the longest a queued check waits`,
    // Issuers repeat from line to line: each is checked once (at most 1,000 kept).
    issuers: new Set<string>(),
  };
  return {
    entity: (line: ExportEntity): OutOfBounds | null => entityBeyond(limits, line),
    job: (line: ExportJob): OutOfBounds | null => jobBeyond(limits, line),
  };
}

/** What the bounds of an import compare with ({@link boundsAt}), and the issuers already checked. */
type Limits = {
  /** Every time sorts below this text, a job's next run below `dueBelow`. */
  below: string;
  dueBelow: string;
  /** What a time too late is said to be later than; a job's next run, `dueAhead`. */
  ahead: string;
  dueAhead: string;
  issuers: Set<string>;
};

/** Why a time is out of bounds: earlier than any index, or later than `after`. */
const whenNot = (text: string, after: string) =>
  text < EARLIEST_SECOND ? `${text} is before ${EARLIEST_TIME.slice(0, 10)}, earlier than any index` : `${text} is later than ${after}`;
/** Whether a time (or none) is within the bounds. */
const inTime = (limits: Limits, text: string | null) => text === null || (text >= EARLIEST_SECOND && text < limits.below);
/** A time out of bounds at `path`. */
const late = (limits: Limits, path: (string | number)[], text: string | null): OutOfBounds => ({
  path,
  message: whenNot(text ?? "", limits.ahead),
});
/** Whether a text (or none) is no longer than the index keeps of `what`. */
const keeps = (text: string | null | undefined, what: (typeof KEPT)[keyof typeof KEPT]) =>
  text === null || text === undefined || within(text, what.max);

/** Whether a claim's issuer is none or a domain as a lookup takes it; each checked once (at most 1,000 kept). */
function anIssuer(issuers: Set<string>, domain: string | null): boolean {
  if (domain === null || issuers.has(domain)) return true;
  if (!isLookupDomain(domain)) return false;
  if (issuers.size >= 1000) issuers.clear();
  issuers.add(domain);
  return true;
}

/** The first value of an entity's line out of bounds ({@link boundsAt}), or null. */
function entityBeyond(limits: Limits, line: ExportEntity): OutOfBounds | null {
  const { name, description, label, text } = KEPT;
  const e = line.entity;
  if (!isLookupDomain(e.domain)) return { path: ["entity", "domain"], message: notADomain(e.domain) };
  if (!keeps(e.network_id, text)) return { path: ["entity", "network_id"], message: text.says };
  if (!keeps(e.entity_type, text)) return { path: ["entity", "entity_type"], message: text.says };
  for (const key in e.details) {
    const what = key === "name" ? name : key === "description" ? description : text;
    if (!keeps(e.details[key], what)) return { path: ["entity", "details", key], message: what.says };
  }
  for (let i = 0; i < e.problems.length; i++) {
    const p = e.problems[i] as ExportEntity["entity"]["problems"][number];
    for (const key of PROBLEM_TEXTS) if (!keeps(p[key], text)) return { path: ["entity", "problems", i, key], message: text.says };
  }
  if (!inTime(limits, e.first_seen_at)) return late(limits, ["entity", "first_seen_at"], e.first_seen_at);
  if (!inTime(limits, e.last_checked_at)) return late(limits, ["entity", "last_checked_at"], e.last_checked_at);
  if (!keeps(e.name, name)) return { path: ["entity", "name"], message: name.says };
  if (!keeps(e.description, description)) return { path: ["entity", "description"], message: description.says };
  for (let i = 0; i < line.claims.length; i++) {
    const c = line.claims[i] as ExportEntity["claims"][number];
    if (!keeps(c.claim_key, text)) return { path: ["claims", i, "claim_key"], message: text.says };
    if (!keeps(c.id, text)) return { path: ["claims", i, "id"], message: text.says };
    if (!keeps(c.label, label)) return { path: ["claims", i, "label"], message: label.says };
    if (!anIssuer(limits.issuers, c.issuer)) return { path: ["claims", i, "issuer"], message: notADomain(c.issuer ?? "") };
    if (!keeps(c.issuer_name, label)) return { path: ["claims", i, "issuer_name"], message: label.says };
    if (!keeps(c.stale_message, text)) return { path: ["claims", i, "stale_message"], message: text.says };
    for (const key of CLAIM_TIMES) if (!inTime(limits, c[key])) return late(limits, ["claims", i, key], c[key]);
  }
  for (let i = 0; i < line.changes.length; i++) {
    const c = line.changes[i] as ExportEntity["changes"][number];
    if (!keeps(c.claim_key, text)) return { path: ["changes", i, "claim_key"], message: text.says };
    if (!keeps(c.id, text)) return { path: ["changes", i, "id"], message: text.says };
    if (!inTime(limits, c.at)) return late(limits, ["changes", i, "at"], c.at);
  }
  return null;
}

/** The first value of a job's line out of bounds ({@link boundsAt}), or null. */
function jobBeyond(limits: Limits, { job }: ExportJob): OutOfBounds | null {
  if (!isLookupDomain(job.domain)) return { path: ["job", "domain"], message: notADomain(job.domain) };
  if (!(job.due_at >= EARLIEST_SECOND && job.due_at < limits.dueBelow))
    return { path: ["job", "due_at"], message: whenNot(job.due_at, limits.dueAhead) };
  if (!inTime(limits, job.queued_at)) return late(limits, ["job", "queued_at"], job.queued_at);
  return null;
}
const PROBLEM_TEXTS = ["code", "message", "path", "detail"] as const;

/** A change of `line` whose position is past the first line's `last_position` (or given without one), or null. */
function positionBeyond(line: ExportEntity, last: number | undefined): OutOfBounds | null {
  for (let i = 0; i < line.changes.length; i++) {
    const position = line.changes[i]?.position;
    if (position === null || position === undefined) continue;
    if (last === undefined) return { path: ["changes", i, "position"], message: "a position, where the first line gives no last_position" };
    if (position > last) return { path: ["changes", i, "position"], message: `past the last_position of the first line (${last})` };
  }
  return null;
}
const CLAIM_TIMES = ["first_seen_at", "last_checked_at", "last_verified_at", "verified_since", "failing_since"] as const;

/** Entities read or written per statement. */
export const EXPORT_BATCH = 1000;

/** Lines an import reads between ticks of the event loop (the write of the batch before goes on meanwhile). */
const YIELD_EVERY = 20;

type Counts = ExportHeader["counts"];
export type Progress = (done: { entities: number; jobs: number }, total: Counts) => void;

/** The columns of each table, in the order of their keys in the file ({@link ExportEntity}, {@link ExportJob}). */
const ENTITY_COLUMNS = [
  ["domain", "text"],
  ["status", "text"],
  ["network_id", "text"],
  ["entity_type", "text"],
  ["details", "jsonb"],
  ["problems", "jsonb"],
  ["verified", "integer"],
  ["unverified", "integer"],
  ["first_seen_at", "timestamptz"],
  ["last_checked_at", "timestamptz"],
  ["name", "text"],
  ["description", "text"],
  ["ever_accepted", "boolean"],
  ["failed_checks", "integer"],
] as const satisfies Columns;
/** A change's, after its entity's domain (not in the file: the line's entity); a claim's are ./columns.ts's. */
const CHANGE_COLUMNS = [
  ["domain", "text"],
  ["kind", "text"],
  ["claim_key", "text"],
  ["id", "text"],
  ["at", "timestamptz"],
  ["verified", "boolean"],
  ["status", "text"],
  ["reason", "text"],
  ["position", "bigint"],
] as const satisfies Columns;
const CLAIM_FIELDS = CLAIM_COLUMNS.slice(1);
const CHANGE_FIELDS = CHANGE_COLUMNS.slice(1);
const JOB_COLUMNS = [
  ["domain", "text"],
  ["reason", "text"],
  ["priority", "integer"],
  ["due_at", "timestamptz"],
  ["backoff_s", "integer"],
  ["attempts", "integer"],
  ["queued_at", "timestamptz"],
] as const satisfies Columns;

/** Each column's key as the line writes it (`"name":`), worked out once. */
const keysOf = new Map<Columns, string[]>();
const keys = (columns: Columns): string[] => {
  let made = keysOf.get(columns);
  if (!made) keysOf.set(columns, (made = columns.map(([name], i) => `${i === 0 ? "{" : ","}"${name}":`)));
  return made;
};

/** Adds to `out` a JSON object of the next fields of `row`, in `columns`' order, keys in that order. */
function objectOf(columns: Columns, row: CopyReader, out: string[]): void {
  const key = keys(columns);
  for (let i = 0; i < columns.length; i++) {
    const type = (columns[i] as Columns[number])[1];
    const v = row.field();
    out.push(key[i] ?? "");
    if (v === null) out.push("null");
    else if (type === "text") out.push(JSON.stringify(v));
    else if (type === "timestamptz") out.push('"', isoTime(v), '"');
    else if (type === "boolean") out.push(v === "t" || v === "true" ? "true" : "false");
    else out.push(v); // a number, or jsonb as the engine writes it: already JSON
  }
  out.push("}");
}

/** A column list for SQL, each column as text (a union's branches must agree), with `prefix`. */
const asText = (columns: Columns, prefix: string) => columns.map(([c]) => `${prefix}.${c}::text`).join(", ");
const nulls = (n: number) => Array.from({ length: n }, () => "NULL::text").join(", ");
const WIDEST = Math.max(ENTITY_COLUMNS.length, CLAIM_FIELDS.length, CHANGE_FIELDS.length);
const padded = (columns: Columns, prefix: string) =>
  [asText(columns, prefix), ...(columns.length < WIDEST ? [nulls(WIDEST - columns.length)] : [])].join(", ");

/**
 * One batch of entities after `after`, with their claims and changes, in one statement (the engine
 * works on the next batch while this side writes the one before): rows tagged 0 (the entity), 1 (a
 * claim, by kind and key) and 2 (a change, oldest first), in domain order, every value as text.
 * Domains and keys compare as bytes (`COLLATE "C"`), whatever the server's locale.
 */
const entityBatch = (after: string, size: number) => `
  WITH b AS MATERIALIZED (SELECT domain FROM entities WHERE domain COLLATE "C" > ${sqlLiteral(after)} ORDER BY domain COLLATE "C" LIMIT ${size})
  SELECT 0, b.domain COLLATE "C", NULL::text COLLATE "C", NULL::text COLLATE "C", NULL::bigint,
    ${padded(ENTITY_COLUMNS, "e")} FROM b JOIN entities e ON e.domain = b.domain
  UNION ALL SELECT 1, b.domain, c.kind, c.claim_key, NULL, ${padded(CLAIM_FIELDS, "c")} FROM b JOIN claims c ON c.domain = b.domain
  UNION ALL SELECT 2, b.domain, NULL, NULL, ch.seq, ${padded(CHANGE_FIELDS, "ch")} FROM b JOIN changes ch ON ch.domain = b.domain
  ORDER BY 2, 1, 3, 4, 5`;

const jobBatch = (after: string, size: number) => `
  SELECT q.domain, ${asText(JOB_COLUMNS, "q")} FROM crawl_queue q WHERE q.domain COLLATE "C" > ${sqlLiteral(after)}
  ORDER BY q.domain COLLATE "C" LIMIT ${size}`;

/** What ends an entity's line after a row of each part (0 the entity, 1 a claim, 2 a change). */
const CLOSE: Record<string, string> = { "0": ',"claims":[],"changes":[]}\n', "1": '],"changes":[]}\n', "2": "]}\n" };

/** The lines of one batch of {@link entityBatch}'s rows, and how many entities, claims and changes they hold. */
function entityLines(text: string): { text: string; n: Omit<Counts, "jobs"> } {
  const row = new CopyReader(text);
  const out: string[] = [];
  const n = { entities: 0, claims: 0, changes: 0 };
  let part: string | null = null;
  while (row.row()) {
    const was: string | null = part;
    part = row.field();
    for (let skip = 0; skip < 4; skip++) row.field(); // the domain and the keys of the order
    // Rows come entity, its claims, its changes: what closes one list and opens the next.
    if (part === "0") {
      if (was !== null) out.push(CLOSE[was] ?? "");
      out.push('{"entity":');
      n.entities++;
    } else if (part !== was) out.push(part === "1" ? ',"claims":[' : was === "0" ? ',"claims":[],"changes":[' : '],"changes":[');
    else out.push(",");
    if (part === "1") n.claims++;
    else if (part === "2") n.changes++;
    objectOf(part === "0" ? ENTITY_COLUMNS : part === "1" ? CLAIM_FIELDS : CHANGE_FIELDS, row, out);
  }
  if (part !== null) out.push(CLOSE[part] ?? "");
  return { text: out.join(""), n };
}

/**
 * Writes the whole index of `db` to `write`, a line at a time (each ends with a newline), from one
 * consistent snapshot; `write` may wait (a full pipe): nothing more is read meanwhile, so memory holds
 * two batches of `batch` entities. Answers the counts; throws, after writing, if what it wrote is not
 * what the store counted (an export that would not import is never said to be whole).
 */
export async function exportIndex(
  db: Db,
  write: (line: string) => Promise<void> | void,
  progress?: Progress,
  batch: number = EXPORT_BATCH,
): Promise<Counts> {
  return db.transaction(async (tx) => {
    await snapshotOf(db, tx);
    const { counts, last } = await countIndex(tx);
    const header: ExportHeader = { schema: EXPORT_SCHEMA, counts, last_position: last };
    await write(`${JSON.stringify(header)}\n`);
    const to: Writing = { tx, write, progress, batch, counts, done: { entities: 0, jobs: 0 } };
    const wrote = await writeEntityLines(to);
    await writeJobLines(to);
    const done = to.done;
    const whole = { entities: done.entities, claims: wrote.claims, changes: wrote.changes, jobs: done.jobs };
    if ((["entities", "claims", "changes", "jobs"] as const).some((k) => whole[k] !== counts[k])) {
      throw new Error(`the export wrote ${JSON.stringify(whole)} where the store counted ${JSON.stringify(counts)}: the file is not whole`);
    }
    return counts;
  });
}

/** An export on its way: where it writes, what the store counted, and how many entities and jobs are written. */
type Writing = {
  tx: Tx;
  write: (line: string) => Promise<void> | void;
  progress: Progress | undefined;
  batch: number;
  counts: Counts;
  done: { entities: number; jobs: number };
};

/** Sets `tx` to read the export's snapshot, its times, literals and batches as the export reads them. */
async function snapshotOf(db: Db, tx: Tx): Promise<void> {
  // One snapshot for the whole file, while the app may write (PostgreSQL; the embedded engine is the export's alone).
  if (db.engine === "postgres") await tx.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
  // Times as isoTime reads them; literals as sqlLiteral writes them; each batch's claims and changes
  // looked up by their entity's domain, never a scan of the table a batch.
  for (const setting of [
    "TimeZone = 'UTC'",
    "DateStyle = 'ISO'",
    "standard_conforming_strings = on",
    "enable_hashjoin = off",
    "enable_mergejoin = off",
  ]) {
    await tx.query(`SET LOCAL ${setting}`);
  }
}

/** What the store holds of each part, and the position of the last change it recorded. */
async function countIndex(tx: Tx): Promise<{ counts: Counts; last: number }> {
  const [count] = await tx.query<{ entities: number; claims: number; changes: number; jobs: number; last: string }>(
    `SELECT (SELECT count(*) FROM entities)::int AS entities, (SELECT count(*) FROM claims)::int AS claims,
       (SELECT count(*) FROM changes)::int AS changes, (SELECT count(*) FROM crawl_queue)::int AS jobs,
       (SELECT last::text FROM change_positions) AS last`,
  );
  const counts: Counts = {
    entities: count?.entities ?? 0,
    claims: count?.claims ?? 0,
    changes: count?.changes ?? 0,
    jobs: count?.jobs ?? 0,
  };
  return { counts, last: Number(count?.last ?? 0) };
}

/** Writes every entity's line, a batch at a time; answers how many claims and changes they held. */
async function writeEntityLines(to: Writing): Promise<{ claims: number; changes: number }> {
  const { tx, write, progress, batch, counts, done } = to;
  const wrote = { claims: 0, changes: 0 };
  // Entities: the next batch is asked for before this one is written.
  let next = tx.copyTo(entityBatch("", batch));
  next.catch(() => undefined);
  for (;;) {
    const rows = await next;
    if (rows === "") break;
    // The next batch starts after this one's last domain, that of its last row (rows are in domain order):
    // the engine reads it while this side writes these lines.
    const last = new CopyReader(rows.slice(rows.lastIndexOf("\n", rows.length - 2) + 1));
    last.row();
    last.field();
    next = tx.copyTo(entityBatch(last.field() ?? "", batch));
    // Awaited at the top of the loop; should the write fail first, its failure is the one thrown.
    next.catch(() => undefined);
    const lines = entityLines(rows);
    await write(lines.text);
    done.entities += lines.n.entities;
    wrote.claims += lines.n.claims;
    wrote.changes += lines.n.changes;
    progress?.(done, counts);
  }
  return wrote;
}

/** Writes every queued job's line, a batch at a time. */
async function writeJobLines(to: Writing): Promise<void> {
  const { tx, write, progress, batch, counts, done } = to;
  let after = "";
  for (;;) {
    const row = new CopyReader(await tx.copyTo(jobBatch(after, batch)));
    const lines: string[] = [];
    let n = 0;
    while (row.row()) {
      after = row.field() ?? after;
      lines.push('{"job":');
      objectOf(JOB_COLUMNS, row, lines);
      lines.push("}\n");
      n++;
    }
    if (n === 0) break;
    await write(lines.join(""));
    done.jobs += n;
    progress?.(done, counts);
  }
}

/** An identifier for SQL text, quoted. */
const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** A line of a file that cannot be imported, and why; nothing was written. */
export class ImportError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(line > 0 ? `line ${line}: ${message}` : message);
    this.name = "ImportError";
  }
}

/** A line read, with its number (1 for the first). */
export type NumberedLine = { n: number; text: string };

/** A key of a path as the message writes it: a word as it is, anything else (a stranger's key) quoted on one line. */
const keyOf = (key: PropertyKey) =>
  typeof key === "number" ? String(key) : /^[\w-]{1,40}$/.test(String(key)) ? String(key) : JSON.stringify(String(key).slice(0, 40));

/** A problem of a line in a few words on one line: where, then what. */
const said = (path: readonly PropertyKey[], message: string) => `${path.length > 0 ? `${path.map(keyOf).join(".")}: ` : ""}${message}`;

/** The first problem of a zod parse. */
const issueOf = (error: z.ZodError) => {
  const first = error.issues[0];
  return first ? said(first.path, first.message) : "not valid";
};

/** Where in a checked line a text (or a key) holds NUL, as its path; null when none does. The schema bounds the depth. */
function nulAt(value: unknown, path: (string | number)[] = []): string | null {
  if (typeof value === "string") return value.includes("\0") ? path.map(keyOf).join(".") : null;
  if (value === null || typeof value !== "object") return null;
  for (const [key, v] of Object.entries(value)) {
    if (key.includes("\0")) return [...path, key].map(keyOf).join(".");
    const found = nulAt(v, [...path, Array.isArray(value) ? Number(key) : key]);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Whether `a` comes after `b` in UTF-8 byte order, the file's (`COLLATE "C"`): code point order.
 * JavaScript's `>` compares UTF-16 units, which disagree where a character beyond U+FFFF (a
 * surrogate pair) meets one of U+E000–U+FFFF.
 */
export function bytesAfter(a: string, b: string): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const pairX = x >= 0xd800 && x <= 0xdfff;
    const pairY = y >= 0xd800 && y <= 0xdfff;
    return pairX === pairY ? x > y : pairX;
  }
  return a.length > b.length;
}

/** A line checked: the header, an entity or a job, as the file gives it. */
type Checked = { kind: "header"; value: ExportHeader } | { kind: "entity"; value: ExportEntity } | { kind: "job"; value: ExportJob };

const PARTS = ["entities", "claims", "changes", "jobs"] as const;

/**
 * Checks a file's lines in order: the header first, entities then jobs, each in strictly increasing
 * domain order, every line of its shape ({@link EntityShape}, {@link JobShape}) and within the bounds
 * of an import at `now` ({@link boundsAt}); no more of each part than the
 * header counts, found at the line that has one too many, and all of them before the jobs, and at
 * `end`. Each problem is an {@link ImportError} naming its line. Holds nothing but the last domain.
 */
function lineChecker(now: number) {
  const state: Checking = {
    bounds: boundsAt(now),
    header: null,
    seen: { entities: 0, claims: 0, changes: 0, jobs: 0 },
    last: "",
    inJobs: false,
    n: 0,
  };
  return {
    check: (line: NumberedLine): Checked => checkLine(state, line),
    end(): Counts {
      const { header, seen, n } = state;
      if (header === null) throw new ImportError(0, "the file is empty");
      for (const key of PARTS) if (seen[key] !== header.counts[key]) throw new ImportError(n, holds(state, key, header.counts));
      return header.counts;
    },
    get total(): Counts {
      return state.header?.counts ?? { entities: 0, claims: 0, changes: 0, jobs: 0 };
    },
    /** The first line's `last_position`; 0 for a file written before positions. */
    get lastPosition(): number {
      return state.header?.last_position ?? 0;
    },
  };
}

/** What {@link lineChecker} holds: the header, what was seen of each part, the last domain, the line's number. */
type Checking = {
  bounds: ReturnType<typeof boundsAt>;
  header: ExportHeader | null;
  seen: Counts;
  last: string;
  inJobs: boolean;
  n: number;
};

/** Says that the file holds another count of `key` than the header's. */
const holds = (state: Checking, key: (typeof PARTS)[number], counts: Counts) =>
  `the file holds ${state.seen[key]} ${key} where its first line says ${counts[key]}: it is cut short or was edited`;

/** Refuses the line that takes one of `keys` past what the header counts. */
function noMore(state: Checking, counts: Counts, ...keys: (typeof PARTS)[number][]): void {
  for (const key of keys)
    if (state.seen[key] > counts[key])
      throw new ImportError(
        state.n,
        `more ${key} than the ${counts[key]} its first line says: the file was edited, or is more than one export`,
      );
}

/** Checks the next line: JSON, then the header, a job or an entity. */
function checkLine(state: Checking, line: NumberedLine): Checked {
  const n = (state.n = line.n);
  // A byte-order mark an editor put before the first line is not part of it.
  const text = n === 1 && line.text.charCodeAt(0) === 0xfeff ? line.text.slice(1) : line.text;
  if (text.trim() === "") throw new ImportError(n, "an empty line");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ImportError(n, "not valid JSON (the file may be cut short)");
  }
  if (state.header === null) return checkHeader(state, value);
  if (value !== null && typeof value === "object" && "job" in value) return checkJob(state, value, text, state.header.counts);
  return checkEntity(state, value, text, state.header);
}

/** The first line: the header, of this format. */
function checkHeader(state: Checking, value: unknown): Checked {
  const parsed = ExportHeader.safeParse(value);
  if (!parsed.success) {
    const schema = (value as { schema?: unknown } | null)?.schema;
    throw new ImportError(
      state.n,
      typeof schema === "string" && schema !== EXPORT_SCHEMA
        ? `the file is ${JSON.stringify(schema.slice(0, 100))}, not ${EXPORT_SCHEMA}`
        : `not an export's first line (${issueOf(parsed.error)})`,
    );
  }
  state.header = parsed.data;
  return { kind: "header", value: state.header };
}

/** Refuses a line whose text holds NUL: the engine refuses NUL in any text; JSON writes it only as this escape. */
function noNul(n: number, text: string, checked: unknown): void {
  const at = text.includes("\\u0000") ? nulAt(checked) : null;
  if (at !== null) throw new ImportError(n, `${at}: a NUL character (\\u0000), which no text of the index holds`);
}

/** A job's line: of its shape and bounds, after every entity, in domain order, no more than the header counts. */
function checkJob(state: Checking, value: unknown, text: string, counts: Counts): Checked {
  const { n, seen } = state;
  const parsed = JobShape.safeParse(value);
  if (!parsed.success) throw new ImportError(n, `not a valid job (${issueOf(parsed.error)})`);
  const out = state.bounds.job(parsed.data);
  if (out) throw new ImportError(n, `not a valid job (${said(out.path, out.message)})`);
  noNul(n, text, parsed.data);
  if (!state.inJobs) {
    // Every entity, claim and change comes before the first job.
    for (const key of ["entities", "claims", "changes"] as const)
      if (seen[key] !== counts[key]) throw new ImportError(n, holds(state, key, counts));
    state.last = "";
  }
  state.inJobs = true;
  if (!bytesAfter(parsed.data.job.domain, state.last))
    throw new ImportError(n, `the job of ${parsed.data.job.domain} is out of domain order, or there twice`);
  state.last = parsed.data.job.domain;
  seen.jobs++;
  noMore(state, counts, "jobs");
  return { kind: "job", value: parsed.data };
}

/** An entity's line: before the jobs, of its shape and bounds, in domain order, no more than the header counts. */
function checkEntity(state: Checking, value: unknown, text: string, header: ExportHeader): Checked {
  const { n, seen } = state;
  const counts = header.counts;
  if (state.inJobs) throw new ImportError(n, "an entity after the jobs: entities come first");
  const parsed = EntityShape.safeParse(value);
  if (!parsed.success) throw new ImportError(n, `not a valid entity (${issueOf(parsed.error)})`);
  const out = state.bounds.entity(parsed.data) ?? positionBeyond(parsed.data, header.last_position);
  if (out) throw new ImportError(n, `not a valid entity (${said(out.path, out.message)})`);
  noNul(n, text, parsed.data);
  const domain = parsed.data.entity.domain;
  if (!bytesAfter(domain, state.last)) throw new ImportError(n, `${domain} is out of domain order, or there twice`);
  state.last = domain;
  seen.entities++;
  seen.claims += parsed.data.claims.length;
  seen.changes += parsed.data.changes.length;
  noMore(state, counts, "entities", "claims", "changes");
  return { kind: "entity", value: parsed.data };
}

/** What an import did. */
export type Imported = { entities: number; kept: number; claims: number; changes: number; jobs: number };

/** The tables an import writes. */
const TABLES = ["entities", "claims", "changes", "search_words", "crawl_queue"] as const;

/**
 * Loads a file into `db` in one transaction, checking each line as it is read (the header first, entities
 * then jobs in domain order, each valid): the first bad line, or counts that differ from the header, roll everything back, so it is
 * all of the file or nothing. Without `merge`, a store that holds an entity is refused. With it, an
 * entity the store has checked as late or later is kept as it is; otherwise the file's row and claims
 * replace it. Changes of verdict are kept from both, each once; a job keeps the earlier due time.
 * The next batch is read and checked while the engine writes the one before. Times are checked
 * against `now` (docs/deploying.md#what-an-import-refuses). A failed import leaves the store its size.
 */
export async function importIndex(db: Db, lines: AsyncIterable<NumberedLine>, options: ImportOptions): Promise<Imported> {
  // The tables whose files keep what a failed import wrote: none, until it writes to one it did not empty first.
  let dirty: readonly string[] = [];
  const imported = db.transaction(async (tx) => {
    // The counts are made once at the end from what was imported (recount), not row by row.
    await tx.query("SET LOCAL ident.counting = 'off'");
    const { emptied, keepPositions } = options.merge ? { emptied: [], keepPositions: false } : await emptyStore(tx);
    // A table just emptied takes the file's rows directly, through COPY; any other (every table when
    // merging, a queue holding seeds, words of names left) only once the whole file is read and checked:
    // meanwhile its rows wait in tables of this transaction's own, which a failure leaves nothing of.
    const staging = stagingFor(emptied, keepPositions);
    await staging.create(tx);
    const aside = await setAside(tx, options.merge);
    const loading: Loading = {
      tx,
      staging,
      options,
      done: { entities: 0, kept: 0, claims: 0, changes: 0, jobs: 0 },
      checker: lineChecker((options.now ?? new Date()).getTime()),
      entities: [],
      jobs: [],
      writing: Promise.resolve(),
      sent: { entities: 0, jobs: 0 },
    };
    await readAll(loading, lines);
    // The whole file is checked: the rows that waited join the store's.
    dirty = staging.tables;
    await mergeStaged(tx, staging, loading.sent, loading.done);
    await putBack(tx, aside);
    // The planner's statistics, as after any bulk load: without them the first reads of a new
    // index (an export, a search) may scan where they would look up.
    await tx.query(`ANALYZE ${PLANNED_TABLES}`);
    // What the home page counts (docs/decisions.md#the-home-page), as the store derives it.
    await recount(tx);
    // Last, holding the counter until the import commits: the changes without a position placed.
    await placeChanges(tx, keepPositions ? loading.checker.lastPosition : 0);
    return loading.done;
  });
  return imported.catch(async (err: unknown) => {
    if (dirty.length > 0) await reclaim(db, dirty);
    throw err;
  });
}

/** How an import runs ({@link importIndex}). */
type ImportOptions = { merge: boolean; progress?: Progress; batch?: number; now?: Date };

/**
 * Readies a store for an import that does not merge: refused if it holds an entity ({@link StoreNotEmpty}),
 * its tables emptied. Answers the tables emptied, and whether the changes keep the file's positions.
 */
async function emptyStore(tx: Tx): Promise<{ emptied: readonly string[]; keepPositions: boolean }> {
  // Nothing else writes these tables until the import ends (its index drops below take the same lock).
  await tx.query(`LOCK TABLE ${TABLES.join(", ")} IN ACCESS EXCLUSIVE MODE`);
  const [held] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM entities");
  if ((held?.n ?? 0) > 0) throw new StoreNotEmpty(held?.n ?? 0);
  // Empty tables are emptied again: each gets new files, which the engine deletes whole should the
  // import roll back, and which the embedded engine writes without logging them
  // (docs/deploying.md#what-an-import-refuses). A table that holds rows (seeds queued, words of
  // names gone) keeps them.
  const [empty] = await tx.query<{ search_words: boolean; crawl_queue: boolean }>(
    "SELECT NOT EXISTS (SELECT 1 FROM search_words) AS search_words, NOT EXISTS (SELECT 1 FROM crawl_queue) AS crawl_queue",
  );
  const emptied = TABLES.filter((t) => t === "entities" || t === "claims" || t === "changes" || empty?.[t] === true);
  await tx.query(`TRUNCATE ${emptied.join(", ")}`);
  // docs/decisions.md#the-order-of-changes: a store that never recorded a change takes the file's
  // positions, so the exported index's cursors go on; any other places the file's after its own.
  return { emptied, keepPositions: (await lastPosition(tx)) === 0 };
}

/** What an import into an empty store takes away until its end: the secondary indexes, the references to entities. */
type SetAside = {
  rebuilt: { indexname: string; indexdef: string }[];
  references: { table: string; name: string; def: string }[];
};

/** Drops, unless `merge`, the indexes and references {@link putBack} makes again at the end. */
async function setAside(tx: Tx, merge: boolean): Promise<SetAside> {
  // Into an empty store, the secondary indexes are built once at the end rather than entry by entry
  // (their definitions read back from the catalogue, so they are the migrations' own); the
  // transaction puts them back whatever happens.
  const rebuilt = merge
    ? []
    : await tx.query<{ indexname: string; indexdef: string }>(
        `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()
         AND tablename IN ('entities', 'claims', 'changes', 'crawl_queue', 'search_words') AND indexdef NOT LIKE 'CREATE UNIQUE%'`,
      );
  for (const { indexname } of rebuilt) await tx.query(`DROP INDEX ${quoteIdent(indexname)}`);
  // And the claims' and changes' references to their entity, checked once at the end for the whole
  // table rather than row by row.
  const references = merge
    ? []
    : await tx.query<{ table: string; name: string; def: string }>(
        `SELECT conrelid::regclass::text AS table, conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
         WHERE contype = 'f' AND conrelid IN ('claims'::regclass, 'changes'::regclass)`,
      );
  for (const r of references) await tx.query(`ALTER TABLE ${quoteIdent(r.table)} DROP CONSTRAINT ${quoteIdent(r.name)}`);
  return { rebuilt, references };
}

/** The indexes and references {@link setAside} dropped, made again over the whole tables. */
async function putBack(tx: Tx, aside: SetAside): Promise<void> {
  for (const { indexdef } of aside.rebuilt) await tx.query(indexdef);
  for (const r of aside.references) await tx.query(`ALTER TABLE ${quoteIdent(r.table)} ADD CONSTRAINT ${quoteIdent(r.name)} ${r.def}`);
}

/**
 * An import on its way: the lines checked into the next batch, and the write of the batch before
 * (one statement at a time on the transaction). `done` counts what is written into the store's
 * tables, `sent` what went to the engine.
 */
type Loading = {
  tx: Tx;
  staging: Staging;
  options: ImportOptions;
  done: Imported;
  checker: ReturnType<typeof lineChecker>;
  entities: ExportEntity[];
  jobs: ExportJob["job"][];
  writing: Promise<void>;
  sent: { entities: number; jobs: number };
};

/** Reads and checks every line, a batch written while the next is read; throws once the write in progress has ended. */
async function readAll(loading: Loading, lines: AsyncIterable<NumberedLine>): Promise<void> {
  const { checker, options } = loading;
  try {
    let read = 0;
    for await (const line of lines) {
      // The engine's replies are events: lines read from memory never wait on one, so without a tick of
      // the event loop now and then the batch being written would stall while the next one is read.
      if (++read % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      const checked = checker.check(line);
      if (checked.kind === "entity") loading.entities.push(checked.value);
      else if (checked.kind === "job") loading.jobs.push(checked.value.job);
      if (loading.entities.length + loading.jobs.length >= (options.batch ?? EXPORT_BATCH)) await flush(loading);
    }
    checker.end();
    await flush(loading);
    await loading.writing;
  } catch (err) {
    // The write in progress ends before the transaction is rolled back.
    await loading.writing.catch(() => undefined);
    throw err;
  }
}

/** Sends the batch read so far, once the batch before is written; a failed write is thrown at the next flush, or at the end. */
async function flush(loading: Loading): Promise<void> {
  const { tx, staging, done, checker, options, sent } = loading;
  const batch = { entities: loading.entities, jobs: loading.jobs };
  loading.entities = [];
  loading.jobs = [];
  // This batch's rows are made ready while the engine still writes the one before.
  const load = batch.entities.length > 0 ? loadEntities(batch.entities, staging) : null;
  // One statement at a time on the transaction: this batch after the one before.
  await loading.writing;
  loading.writing = (async () => {
    if (load) await load(tx, done);
    if (batch.jobs.length > 0) await writeJobs(tx, batch.jobs, staging, done);
    sent.entities += batch.entities.length;
    sent.jobs += batch.jobs.length;
    options.progress?.(sent, checker.total);
  })();
  // A failed write is awaited (and thrown) at the next flush, or at the end.
  loading.writing.catch(() => undefined);
}

/**
 * Gives back the disk a rolled-back import took in `tables` (docs/deploying.md#what-an-import-refuses):
 * its rows are dead but their pages stay, and the embedded engine has no autovacuum to free them.
 * VACUUM returns the empty pages at a table's end to the system; the embedded engine's checkpoint then
 * recycles the log the rows were written to. Best effort: the import's own failure is what is said.
 */
async function reclaim(db: Db, tables: readonly string[]): Promise<void> {
  try {
    await db.query(`VACUUM ${tables.join(", ")}`);
    if (db.engine === "pglite") await db.query("CHECKPOINT");
  } catch {
    // The engine gone with the import (a server that went away): nothing more to give back now.
  }
}

/** The store already holds entities, and the import was not asked to merge. */
export class StoreNotEmpty extends Error {
  constructor(readonly entities: number) {
    super(`the store already holds ${entities} entities; import into an empty store, or give --merge to add the file's to them`);
    this.name = "StoreNotEmpty";
  }
}

/** An entity's search columns, worked out as recording a check does (docs/decisions.md#search). */
const searchOf = (b: ExportEntity) =>
  searchColumns({
    name: b.entity.name,
    domain: b.entity.domain,
    networkId: b.entity.network_id,
    // What the claims listed now are called, as recording a check takes them.
    claims: b.claims.filter((c) => c.present).flatMap((c) => [c.label, c.issuer_name]),
    description: b.entity.description,
  });

/**
 * A row to load, in COPY text: `before`, then `row`'s value of each of `columns` (jsonb as JSON), then `after`;
 * made from the same column list the COPY statement names, so the two cannot disagree.
 */
function copyRow(columns: Columns, row: Readonly<Record<string, unknown>>, before: CopyValue[], after: CopyValue[] = []): string {
  const values = columns.map(([name, type]) => (type === "jsonb" ? jsonb(row[name]) : (row[name] as CopyValue)));
  return copyLine([...before, ...values, ...after]);
}

/**
 * Where an import writes each table's rows: into the table itself when the import emptied it (nothing
 * can collide there, and a failure leaves nothing: docs/deploying.md#what-an-import-refuses), else
 * into a table of its own, dropped with the transaction, merged into the store's at the end.
 */
type Staging = {
  /** Where entities, claims, changes, words of names and jobs go: a table's own name, or its stage. */
  into: Record<"entities" | "claims" | "changes" | "search_words" | "crawl_queue", string>;
  /** The store's tables written only at the end. */
  tables: string[];
  /** Whether the file's positions are the changes' (docs/decisions.md#the-order-of-changes): else they are placed at the end. */
  positions: boolean;
  create(tx: Tx): Promise<void>;
};

/** The stages' columns: a table's own (and for entities its search columns, for changes the file's order). */
const STAGES = {
  entities: [...ENTITY_COLUMNS.map(([c, t]) => `${c} ${t}`), "search tsvector", "search_names tsvector"],
  claims: CLAIM_COLUMNS.map(([c, t]) => `${c} ${t}`),
  changes: ["n bigserial", ...CHANGE_COLUMNS.map(([c, t]) => `${c} ${t}`)],
  search_words: ["domain text", "word text"],
  crawl_queue: JOB_COLUMNS.map(([c, t]) => `${c} ${t}`),
} as const;

function stagingFor(emptied: readonly string[], positions: boolean): Staging {
  const staged = TABLES.filter((t) => !emptied.includes(t));
  return {
    into: Object.fromEntries(TABLES.map((t) => [t, staged.includes(t) ? `import_${t}` : t])) as Staging["into"],
    tables: staged,
    positions,
    async create(tx) {
      for (const t of staged) await tx.query(`CREATE TEMPORARY TABLE import_${t} (${STAGES[t].join(", ")}) ON COMMIT DROP`);
    },
  };
}

/**
 * One batch of entities: each table takes its rows through COPY, the engine's bulk path (rows, claims
 * and changes in the file's order; each change's sequence number follows it), and the words of their
 * names, into the table or its stage ({@link Staging}). The rows are made into COPY text at once; the
 * function answered sends them, once the batch before is written.
 */
function loadEntities(batch: ExportEntity[], staging: Staging): (tx: Tx, done: Imported) => Promise<void> {
  const entities: string[] = [];
  const claims: string[] = [];
  const changes: string[] = [];
  const words = new Set<string>();
  const wordRows: string[] = [];
  const wordsStaged = staging.into.search_words !== "search_words";
  for (const b of batch) {
    const e = b.entity;
    const columns = searchOf(b);
    if (wordsStaged) for (const word of typoTerms(columns.names)) wordRows.push(copyLine([e.domain, word]));
    else for (const word of columns.names) words.add(word);
    entities.push(copyRow(ENTITY_COLUMNS, e, [], [columns.search, columns.search_names]));
    for (const c of b.claims) claims.push(copyRow(CLAIM_FIELDS, c, [e.domain]));
    for (const c of b.changes)
      changes.push(copyRow(CHANGE_FIELDS, Object.assign({}, c, { position: staging.positions ? (c.position ?? null) : null }), [e.domain]));
  }
  const rows = { entities: entities.join(""), claims: claims.join(""), changes: changes.join(""), words: wordRows.join("") };
  const into = staging.into;
  return async (tx, done) => {
    await tx.copyFrom(into.entities, [...ENTITY_COLUMNS.map(([name]) => name), "search", "search_names"], rows.entities);
    if (wordsStaged) {
      if (wordRows.length > 0) await tx.copyFrom(into.search_words, ["domain", "word"], rows.words);
    } else await addTypoTerms(tx, words);
    if (claims.length > 0)
      await tx.copyFrom(
        into.claims,
        CLAIM_COLUMNS.map(([name]) => name),
        rows.claims,
      );
    if (changes.length > 0)
      await tx
        .copyFrom(
          into.changes,
          CHANGE_COLUMNS.map(([name]) => name),
          rows.changes,
        )
        .catch((err: unknown) => {
          // Positions are unique (docs/decisions.md#the-order-of-changes): one twice is a file edited, or two files in one.
          if ((err as { code?: unknown }).code === "23505")
            throw new ImportError(0, "two changes have the same position: the file was edited, or is more than one export");
          throw err;
        });
    if (into.entities === "entities") {
      done.entities += batch.length;
      done.claims += claims.length;
      done.changes += changes.length;
    }
  };
}

/** One batch of queued jobs through COPY, into an empty queue or its stage. */
async function writeJobs(tx: Tx, jobs: ExportJob["job"][], staging: Staging, done: Imported): Promise<void> {
  await tx.copyFrom(
    staging.into.crawl_queue,
    JOB_COLUMNS.map(([name]) => name),
    jobs.map((j) => copyRow(JOB_COLUMNS, j, [])).join(""),
  );
  if (staging.into.crawl_queue === "crawl_queue") done.jobs += jobs.length;
}

/**
 * The staged rows into the store's tables, once the whole file is checked: an entity the store checked
 * as late or later is kept, the others' rows and claims replace the store's; every change of the file
 * joins the store's unless it holds it already (in the file's order); the words of the names taken; a
 * job already queued keeps the earlier due time and the higher priority. `sent` counts the file's.
 */
async function mergeStaged(tx: Tx, staging: Staging, sent: { entities: number; jobs: number }, done: Imported): Promise<void> {
  const staged = new Set(staging.tables);
  const count = async (sql: string) =>
    (await tx.query<{ n: number }>(`WITH w AS (${sql} RETURNING 1) SELECT count(*)::int AS n FROM w`))[0]?.n ?? 0;
  if (staged.has("entities")) {
    await tx.query("ANALYZE import_entities, import_claims, import_changes");
    await tx.query("CREATE TEMPORARY TABLE import_taken (domain text PRIMARY KEY) ON COMMIT DROP");
    const all = `${names(ENTITY_COLUMNS)}, search, search_names`;
    await tx.query(
      `WITH written AS (
         INSERT INTO entities (${all}) SELECT ${all} FROM import_entities
         ON CONFLICT (domain) DO UPDATE SET status = excluded.status, network_id = excluded.network_id, entity_type = excluded.entity_type,
           details = excluded.details, problems = excluded.problems, verified = excluded.verified, unverified = excluded.unverified,
           first_seen_at = LEAST(entities.first_seen_at, excluded.first_seen_at), last_checked_at = excluded.last_checked_at,
           name = excluded.name, description = excluded.description, ever_accepted = entities.ever_accepted OR excluded.ever_accepted,
           failed_checks = excluded.failed_checks, search = excluded.search, search_names = excluded.search_names
         WHERE entities.last_checked_at < excluded.last_checked_at
         RETURNING domain)
       INSERT INTO import_taken SELECT domain FROM written`,
    );
    const [taken] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM import_taken");
    done.entities += taken?.n ?? 0;
    done.kept += sent.entities - (taken?.n ?? 0);
    await tx.query("DELETE FROM claims WHERE domain IN (SELECT domain FROM import_taken)");
    done.claims += await count(
      `INSERT INTO claims (${names(CLAIM_COLUMNS)}) SELECT ${names(CLAIM_COLUMNS)} FROM import_claims WHERE domain IN (SELECT domain FROM import_taken)`,
    );
    done.changes += await count(
      `INSERT INTO changes (${names(CHANGE_COLUMNS)})
       SELECT ${CHANGE_COLUMNS.map(([c]) => (c === "position" ? "NULL" : `x.${c}`)).join(", ")} FROM import_changes x
       WHERE NOT EXISTS (SELECT 1 FROM changes c WHERE c.domain = x.domain AND c.kind = x.kind AND c.claim_key = x.claim_key AND c.at = x.at)
       ORDER BY x.n`,
    );
  }
  if (staged.has("search_words")) {
    const taken = staged.has("entities") ? " WHERE domain IN (SELECT domain FROM import_taken)" : "";
    await tx.query(`INSERT INTO search_words (word) SELECT DISTINCT word FROM import_search_words${taken} ON CONFLICT DO NOTHING`);
  }
  if (staged.has("crawl_queue")) {
    await tx.query(
      `INSERT INTO crawl_queue (${names(JOB_COLUMNS)}) SELECT ${names(JOB_COLUMNS)} FROM import_crawl_queue
       ON CONFLICT (domain) DO UPDATE SET due_at = LEAST(crawl_queue.due_at, excluded.due_at),
         priority = LEAST(crawl_queue.priority, excluded.priority)`,
    );
    done.jobs += sent.jobs;
  }
}
