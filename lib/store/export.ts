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
import { z } from "zod";
import type { Db, Queryable, Tx } from "./db";
import { copyLine, CopyReader, isoTime, sqlLiteral, type CopyValue } from "./copy-text";
import { addTypoWords, jsonb } from "./verdicts";
import { searchColumns } from "./words";

export const EXPORT_SCHEMA = "ident-resolver/export@1";

const Time = z.iso.datetime({ offset: false });
const MaybeTime = Time.nullable();

export const ExportHeader = z.strictObject({
  schema: z.literal(EXPORT_SCHEMA),
  counts: z.strictObject({
    entities: z.number().int().min(0),
    claims: z.number().int().min(0),
    changes: z.number().int().min(0),
    jobs: z.number().int().min(0),
  }),
});
export type ExportHeader = z.infer<typeof ExportHeader>;

const EntityRow = z.strictObject({
  domain: z.string().min(1).max(253),
  status: z.string().min(1),
  network_id: z.string().nullable(),
  entity_type: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  problems: z.array(z.unknown()),
  verified: z.number().int().min(0),
  unverified: z.number().int().min(0),
  first_seen_at: Time,
  last_checked_at: Time,
  name: z.string().nullable(),
  description: z.string().nullable(),
  ever_accepted: z.boolean(),
  failed_checks: z.number().int().min(0),
});

const ClaimRow = z.strictObject({
  kind: z.enum(["properties", "credentials", "connections"]),
  claim_key: z.string(),
  id: z.string().nullable(),
  label: z.string().nullable(),
  issuer: z.string().nullable(),
  issuer_name: z.string().nullable(),
  present: z.boolean(),
  verified: z.boolean(),
  reason: z.string().nullable(),
  stale_reason: z.string().nullable(),
  stale_message: z.string().nullable(),
  first_seen_at: Time,
  last_checked_at: Time,
  last_verified_at: MaybeTime,
  verified_since: MaybeTime,
  failing_since: MaybeTime,
});

const ChangeRow = z.strictObject({
  kind: z.enum(["entity", "properties", "credentials", "connections"]),
  claim_key: z.string(),
  id: z.string().nullable(),
  at: Time,
  verified: z.boolean().nullable(),
  status: z.string().nullable(),
  reason: z.string().nullable(),
});

export const ExportEntity = z.strictObject({ entity: EntityRow, claims: z.array(ClaimRow), changes: z.array(ChangeRow) });
export type ExportEntity = z.infer<typeof ExportEntity>;

export const ExportJob = z.strictObject({
  job: z.strictObject({
    domain: z.string().min(1).max(253),
    reason: z.string(),
    priority: z.number().int(),
    due_at: Time,
    backoff_s: z.number().int().min(0),
    attempts: z.number().int().min(0),
    queued_at: Time,
  }),
});
export type ExportJob = z.infer<typeof ExportJob>;

/** Entities read or written per statement. */
export const EXPORT_BATCH = 1000;

/** Lines an import reads between turns of the event loop (the write of the batch before goes on meanwhile). */
const YIELD_EVERY = 20;

type Counts = ExportHeader["counts"];
export type Progress = (done: { entities: number; jobs: number }, total: Counts) => void;

/** A column of a table the file carries, with its SQL type: what the engine reads it as, and how a line writes it. */
type Columns = readonly (readonly [name: string, type: "text" | "jsonb" | "integer" | "boolean" | "timestamptz"])[];

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
/** A claim's and a change's, after their entity's domain (not in the file: the line's entity). */
const CLAIM_COLUMNS = [
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
const CHANGE_COLUMNS = [
  ["domain", "text"],
  ["kind", "text"],
  ["claim_key", "text"],
  ["id", "text"],
  ["at", "timestamptz"],
  ["verified", "boolean"],
  ["status", "text"],
  ["reason", "text"],
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
  let known = keysOf.get(columns);
  if (!known) keysOf.set(columns, (known = columns.map(([name], i) => `${i === 0 ? "{" : ","}"${name}":`)));
  return known;
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
    const [count] = await tx.query<{ entities: number; claims: number; changes: number; jobs: number }>(
      `SELECT (SELECT count(*) FROM entities)::int AS entities, (SELECT count(*) FROM claims)::int AS claims,
         (SELECT count(*) FROM changes)::int AS changes, (SELECT count(*) FROM crawl_queue)::int AS jobs`,
    );
    const counts: Counts = {
      entities: count?.entities ?? 0,
      claims: count?.claims ?? 0,
      changes: count?.changes ?? 0,
      jobs: count?.jobs ?? 0,
    };
    await write(`${JSON.stringify({ schema: EXPORT_SCHEMA, counts } satisfies ExportHeader)}\n`);
    const done = { entities: 0, jobs: 0 };
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
    const whole = { entities: done.entities, claims: wrote.claims, changes: wrote.changes, jobs: done.jobs };
    if ((["entities", "claims", "changes", "jobs"] as const).some((k) => whole[k] !== counts[k])) {
      throw new Error(`the export wrote ${JSON.stringify(whole)} where the store counted ${JSON.stringify(counts)}: the file is not whole`);
    }
    return counts;
  });
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

/** The first problem of a zod parse, in a few words. */
const issueOf = (error: z.ZodError) => {
  const first = error.issues[0];
  return first ? `${first.path.length > 0 ? `${first.path.join(".")}: ` : ""}${first.message}` : "not valid";
};

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

/**
 * Checks a file's lines in order: the header first, entities then jobs, each in strictly increasing
 * domain order, every line valid; `end` checks the counts the header gave. Each problem is an
 * {@link ImportError} naming its line. Holds nothing but the last domain.
 */
function lineChecker() {
  let header: ExportHeader | null = null;
  const seen = { entities: 0, claims: 0, changes: 0, jobs: 0 };
  let last = "";
  let inJobs = false;
  let n = 0;
  return {
    check(line: NumberedLine): Checked {
      n = line.n;
      if (line.text.trim() === "") throw new ImportError(n, "an empty line");
      let value: unknown;
      try {
        value = JSON.parse(line.text);
      } catch {
        throw new ImportError(n, "not valid JSON (the file may be cut short)");
      }
      if (header === null) {
        const parsed = ExportHeader.safeParse(value);
        if (!parsed.success) {
          const schema = (value as { schema?: unknown } | null)?.schema;
          throw new ImportError(
            n,
            typeof schema === "string" && schema !== EXPORT_SCHEMA
              ? `the file is ${JSON.stringify(schema)}, not ${EXPORT_SCHEMA}`
              : `not an export's first line (${issueOf(parsed.error)})`,
          );
        }
        header = parsed.data;
        return { kind: "header", value: header };
      }
      if (value !== null && typeof value === "object" && "job" in value) {
        const parsed = ExportJob.safeParse(value);
        if (!parsed.success) throw new ImportError(n, `not a valid job (${issueOf(parsed.error)})`);
        if (!inJobs) last = "";
        inJobs = true;
        if (!bytesAfter(parsed.data.job.domain, last))
          throw new ImportError(n, `the job of ${parsed.data.job.domain} is out of domain order`);
        last = parsed.data.job.domain;
        seen.jobs++;
        return { kind: "job", value: parsed.data };
      }
      if (inJobs) throw new ImportError(n, "an entity after the jobs: entities come first");
      const parsed = ExportEntity.safeParse(value);
      if (!parsed.success) throw new ImportError(n, `not a valid entity (${issueOf(parsed.error)})`);
      const domain = parsed.data.entity.domain;
      if (!bytesAfter(domain, last)) throw new ImportError(n, `${domain} is out of domain order, or there twice`);
      last = domain;
      seen.entities++;
      seen.claims += parsed.data.claims.length;
      seen.changes += parsed.data.changes.length;
      return { kind: "entity", value: parsed.data };
    },
    end(): Counts {
      if (header === null) throw new ImportError(0, "the file is empty");
      for (const key of ["entities", "claims", "changes", "jobs"] as const) {
        if (seen[key] !== header.counts[key]) {
          throw new ImportError(
            n,
            `the file holds ${seen[key]} ${key} where its first line says ${header.counts[key]}: it is cut short or was edited`,
          );
        }
      }
      return header.counts;
    },
    get total(): Counts {
      return header?.counts ?? { entities: 0, claims: 0, changes: 0, jobs: 0 };
    },
  };
}

/** What an import did. */
export type Imported = { entities: number; kept: number; claims: number; changes: number; jobs: number };

/**
 * Loads a file into `db` in one transaction, checking each line as it is read (the header first, entities
 * then jobs in domain order, each valid): the first bad line, or counts that differ from the header, roll everything back, so it is
 * all of the file or nothing. Without `merge`, a store that holds an entity is refused. With it, an
 * entity the store has checked as late or later is kept as it is; otherwise the file's row and claims
 * replace it. Changes of verdict are kept from both, each once; a job keeps the earlier due time.
 * The next batch is read and checked while the engine writes the one before.
 */
export async function importIndex(
  db: Db,
  lines: AsyncIterable<NumberedLine>,
  options: { merge: boolean; progress?: Progress; batch?: number },
): Promise<Imported> {
  return db.transaction(async (tx) => {
    if (!options.merge) {
      const [held] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM entities");
      if ((held?.n ?? 0) > 0) throw new StoreNotEmpty(held?.n ?? 0);
    }
    // A queue with nothing in it takes the file's jobs (each domain once, the checker saw to it) through
    // COPY; one that holds jobs (seeds queued before any check) merges them.
    const copyJobs = !options.merge && !(await tx.query<{ any: boolean }>("SELECT EXISTS (SELECT 1 FROM crawl_queue) AS any"))[0]?.any;
    // Into an empty store, the secondary indexes are built once at the end rather than entry by entry
    // (their definitions read back from the catalogue, so they are the migrations' own); the
    // transaction puts them back whatever happens.
    const rebuilt = options.merge
      ? []
      : await tx.query<{ indexname: string; indexdef: string }>(
          `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()
           AND tablename IN ('entities', 'claims', 'changes', 'crawl_queue', 'search_words') AND indexdef NOT LIKE 'CREATE UNIQUE%'`,
        );
    for (const { indexname } of rebuilt) await tx.query(`DROP INDEX ${quoteIdent(indexname)}`);
    // And the claims' and changes' references to their entity, checked once at the end for the whole
    // table rather than row by row.
    const references = options.merge
      ? []
      : await tx.query<{ table: string; name: string; def: string }>(
          `SELECT conrelid::regclass::text AS table, conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
           WHERE contype = 'f' AND conrelid IN ('claims'::regclass, 'changes'::regclass)`,
        );
    for (const r of references) await tx.query(`ALTER TABLE ${quoteIdent(r.table)} DROP CONSTRAINT ${quoteIdent(r.name)}`);
    const done: Imported = { entities: 0, kept: 0, claims: 0, changes: 0, jobs: 0 };
    const checker = lineChecker();
    let entities: ExportEntity[] = [];
    let jobs: ExportJob["job"][] = [];
    let writing: Promise<void> = Promise.resolve();
    const flush = async () => {
      const batch = { entities, jobs };
      entities = [];
      jobs = [];
      // Into an empty store, this batch's rows are made ready while the engine still writes the one before.
      const load = !options.merge && batch.entities.length > 0 ? loadEntities(batch.entities) : null;
      // One statement at a time on the transaction: this batch after the one before.
      await writing;
      writing = (async () => {
        if (load) await load(tx, done);
        else if (batch.entities.length > 0) await mergeEntities(tx, batch.entities, done);
        if (batch.jobs.length > 0) await writeJobs(tx, batch.jobs, copyJobs, done);
        options.progress?.({ entities: done.entities + done.kept, jobs: done.jobs }, checker.total);
      })();
      // A failed write is awaited (and thrown) at the next flush, or at the end.
      writing.catch(() => undefined);
    };
    try {
      let read = 0;
      for await (const line of lines) {
        // The engine's replies are events: lines read from memory never wait on one, so without a turn of
        // the event loop now and then the batch being written would stall while the next one is read.
        if (++read % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
        const checked = checker.check(line);
        if (checked.kind === "entity") entities.push(checked.value);
        else if (checked.kind === "job") jobs.push(checked.value.job);
        if (entities.length + jobs.length >= (options.batch ?? EXPORT_BATCH)) await flush();
      }
      checker.end();
      await flush();
      await writing;
    } catch (err) {
      // The write in progress ends before the transaction is rolled back.
      await writing.catch(() => undefined);
      throw err;
    }
    for (const { indexdef } of rebuilt) await tx.query(indexdef);
    for (const r of references) await tx.query(`ALTER TABLE ${quoteIdent(r.table)} ADD CONSTRAINT ${quoteIdent(r.name)} ${r.def}`);
    // The planner's statistics, as after any bulk load: without them the first reads of a new
    // index (an export, a search) may scan where they would look up.
    await tx.query("ANALYZE entities, claims, changes, crawl_queue, search_words");
    return done;
  });
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
 * One batch of entities into a store that was empty: nothing can collide and nothing is looked up, so
 * each table takes its rows through COPY, the engine's bulk path (rows, claims and changes in the
 * file's order; each change's sequence number follows it), and the words of their names. The rows are
 * made into COPY text at once; the function answered sends them, once the batch before is written.
 */
function loadEntities(batch: ExportEntity[]): (tx: Tx, done: Imported) => Promise<void> {
  const entities: string[] = [];
  const claims: string[] = [];
  const changes: string[] = [];
  const words = new Set<string>();
  for (const b of batch) {
    const e = b.entity;
    const columns = searchOf(b);
    for (const word of columns.names) words.add(word);
    entities.push(copyRow(ENTITY_COLUMNS, e, [], [columns.search, columns.search_names]));
    for (const c of b.claims) claims.push(copyRow(CLAIM_FIELDS, c, [e.domain]));
    for (const c of b.changes) changes.push(copyRow(CHANGE_FIELDS, c, [e.domain]));
  }
  const rows = { entities: entities.join(""), claims: claims.join(""), changes: changes.join("") };
  return async (tx, done) => {
    await tx.copyFrom("entities", [...ENTITY_COLUMNS.map(([name]) => name), "search", "search_names"], rows.entities);
    await addTypoWords(tx, words);
    if (claims.length > 0)
      await tx.copyFrom(
        "claims",
        CLAIM_COLUMNS.map(([name]) => name),
        rows.claims,
      );
    if (changes.length > 0)
      await tx.copyFrom(
        "changes",
        CHANGE_COLUMNS.map(([name]) => name),
        rows.changes,
      );
    done.entities += batch.length;
    done.claims += claims.length;
    done.changes += changes.length;
  };
}

/**
 * One batch of entities merged into a store that holds some: an entity the store checked as late or
 * later is kept, the others' rows, claims and changes replace or join the store's.
 */
async function mergeEntities(tx: Queryable, batch: ExportEntity[], done: Imported): Promise<void> {
  const namesOf = new Map<string, string[]>();
  const rows = batch.map((b) => {
    const columns = searchOf(b);
    namesOf.set(b.entity.domain, columns.names);
    return Object.assign({}, b.entity, { search: columns.search, search_names: columns.search_names });
  });
  const written = await tx.query<{ domain: string }>(
    `INSERT INTO entities (domain, status, network_id, entity_type, details, problems, verified, unverified, first_seen_at,
       last_checked_at, name, description, ever_accepted, failed_checks, search, search_names)
     SELECT domain, status, network_id, entity_type, details, problems, verified, unverified, first_seen_at, last_checked_at,
       name, description, ever_accepted, failed_checks, search::tsvector, search_names::tsvector
     FROM jsonb_to_recordset($1::jsonb) AS x(domain text, status text, network_id text, entity_type text, details jsonb, problems jsonb,
       verified integer, unverified integer, first_seen_at timestamptz, last_checked_at timestamptz, name text, description text,
       ever_accepted boolean, failed_checks integer, search text, search_names text)
     ON CONFLICT (domain) DO UPDATE SET status = excluded.status, network_id = excluded.network_id, entity_type = excluded.entity_type,
       details = excluded.details, problems = excluded.problems, verified = excluded.verified, unverified = excluded.unverified,
       first_seen_at = LEAST(entities.first_seen_at, excluded.first_seen_at), last_checked_at = excluded.last_checked_at,
       name = excluded.name, description = excluded.description, ever_accepted = entities.ever_accepted OR excluded.ever_accepted,
       failed_checks = excluded.failed_checks, search = excluded.search, search_names = excluded.search_names
     WHERE entities.last_checked_at < excluded.last_checked_at
     RETURNING domain`,
    [jsonb(rows)],
  );
  const replaced = new Set(written.map((w) => w.domain));
  await addTypoWords(tx, new Set([...replaced].flatMap((d) => namesOf.get(d) ?? [])));
  const taken = batch.filter((b) => replaced.has(b.entity.domain));
  done.entities += taken.length;
  done.kept += batch.length - taken.length;
  const domains = taken.map((b) => b.entity.domain);
  if (domains.length > 0) await tx.query("DELETE FROM claims WHERE domain = ANY($1::text[])", [domains]);
  const claims = taken.flatMap((b) => b.claims.map((c) => Object.assign({ domain: b.entity.domain }, c)));
  if (claims.length > 0) {
    await tx.query(
      `INSERT INTO claims (${CLAIM_COLUMNS.map(([c]) => c).join(", ")}) SELECT * FROM ${unnest(CLAIM_COLUMNS)}`,
      CLAIM_COLUMNS.map(([c]) => claims.map((row) => row[c])),
    );
    done.claims += claims.length;
  }
  // Changes from every entity of the file, in the file's order; merged, the store's own are kept and each change is written once.
  const changes = batch.flatMap((b) => b.changes.map((c) => Object.assign({ domain: b.entity.domain }, c)));
  if (changes.length > 0) {
    const added = await tx.query<{ n: number }>(
      `INSERT INTO changes (${CHANGE_COLUMNS.map(([c]) => c).join(", ")})
       SELECT ${CHANGE_COLUMNS.map(([c]) => `x.${c}`).join(", ")} FROM ${unnest(CHANGE_COLUMNS)} WITH ORDINALITY AS x(${CHANGE_COLUMNS.map(([c]) => c).join(", ")}, n)
       WHERE NOT EXISTS (SELECT 1 FROM changes c WHERE c.domain = x.domain AND c.kind = x.kind AND c.claim_key = x.claim_key AND c.at = x.at)
       ORDER BY x.n
       RETURNING 1 AS n`,
      CHANGE_COLUMNS.map(([c]) => changes.map((row) => row[c])),
    );
    done.changes += added.length;
  }
}

/** Rows given as one array per column: the engine reads them without parsing JSON (a third faster than jsonb_to_recordset). */
const unnest = (columns: readonly (readonly [string, string])[]) =>
  `unnest(${columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(", ")})`;

/** One batch of queued jobs: through COPY into an empty queue, or merged (a domain already queued keeps the earlier due time). */
async function writeJobs(tx: Tx, jobs: ExportJob["job"][], copy: boolean, done: Imported): Promise<void> {
  if (copy) {
    const rows = jobs.map((j) => copyRow(JOB_COLUMNS, j, []));
    await tx.copyFrom(
      "crawl_queue",
      JOB_COLUMNS.map(([name]) => name),
      rows.join(""),
    );
  } else {
    await tx.query(
      `INSERT INTO crawl_queue (domain, reason, priority, due_at, backoff_s, attempts, queued_at)
       SELECT domain, reason, priority, due_at, backoff_s, attempts, queued_at
       FROM jsonb_to_recordset($1::jsonb) AS x(domain text, reason text, priority integer, due_at timestamptz, backoff_s integer,
         attempts integer, queued_at timestamptz)
       ON CONFLICT (domain) DO UPDATE SET due_at = LEAST(crawl_queue.due_at, excluded.due_at),
         priority = LEAST(crawl_queue.priority, excluded.priority)`,
      [jsonb(jobs)],
    );
  }
  done.jobs += jobs.length;
}
