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
import type { Db, Queryable } from "./db";
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

type Counts = ExportHeader["counts"];
export type Progress = (done: { entities: number; jobs: number }, total: Counts) => void;

/** A time as the file writes it, in SQL: UTC, milliseconds, as JavaScript's toISOString. */
const T = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * An entity's line, made by the engine itself (one statement a batch, no row crossing into
 * JavaScript): keys in the order of {@link ExportEntity}, claims by kind and key, changes oldest first.
 */
const ENTITY_LINES = `
  SELECT e.domain, json_build_object(
    'entity', json_build_object('domain', e.domain, 'status', e.status, 'network_id', e.network_id, 'entity_type', e.entity_type,
      'details', e.details, 'problems', e.problems, 'verified', e.verified, 'unverified', e.unverified,
      'first_seen_at', ${T("e.first_seen_at")}, 'last_checked_at', ${T("e.last_checked_at")}, 'name', e.name,
      'description', e.description, 'ever_accepted', e.ever_accepted, 'failed_checks', e.failed_checks),
    'claims', coalesce((
      SELECT json_agg(json_build_object('kind', c.kind, 'claim_key', c.claim_key, 'id', c.id, 'label', c.label, 'issuer', c.issuer,
          'issuer_name', c.issuer_name, 'present', c.present, 'verified', c.verified, 'reason', c.reason,
          'stale_reason', c.stale_reason, 'stale_message', c.stale_message, 'first_seen_at', ${T("c.first_seen_at")},
          'last_checked_at', ${T("c.last_checked_at")}, 'last_verified_at', ${T("c.last_verified_at")},
          'verified_since', ${T("c.verified_since")}, 'failing_since', ${T("c.failing_since")})
        ORDER BY c.kind COLLATE "C", c.claim_key COLLATE "C")
      FROM claims c WHERE c.domain = e.domain), '[]'::json),
    'changes', coalesce((
      SELECT json_agg(json_build_object('kind', ch.kind, 'claim_key', ch.claim_key, 'id', ch.id, 'at', ${T("ch.at")},
          'verified', ch.verified, 'status', ch.status, 'reason', ch.reason) ORDER BY ch.seq)
      FROM changes ch WHERE ch.domain = e.domain), '[]'::json)
  )::text AS line
  FROM entities e WHERE e.domain COLLATE "C" > $1 ORDER BY e.domain COLLATE "C" LIMIT $2`;

const JOB_LINES = `
  SELECT domain, json_build_object('job', json_build_object('domain', domain, 'reason', reason, 'priority', priority,
    'due_at', ${T("due_at")}, 'backoff_s', backoff_s, 'attempts', attempts, 'queued_at', ${T("queued_at")}))::text AS line
  FROM crawl_queue WHERE domain COLLATE "C" > $1 ORDER BY domain COLLATE "C" LIMIT $2`;

/**
 * Writes the whole index of `db` to `write`, a line at a time (each ends with a newline), from one
 * consistent snapshot; `write` may wait (a full pipe): nothing more is read meanwhile, so memory holds
 * one batch. Answers the counts.
 */
export async function exportIndex(db: Db, write: (line: string) => Promise<void> | void, progress?: Progress): Promise<Counts> {
  return db.transaction(async (tx) => {
    // One snapshot for the whole file, while the app may write (PostgreSQL; the embedded engine is the export's alone).
    if (db.engine === "postgres") await tx.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
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
    for (const [sql, kind] of [
      [ENTITY_LINES, "entities"],
      [JOB_LINES, "jobs"],
    ] as const) {
      let after = "";
      for (;;) {
        const rows = await tx.query<{ domain: string; line: string }>(sql, [after, EXPORT_BATCH]);
        if (rows.length === 0) break;
        await write(`${rows.map((r) => r.line).join("\n")}\n`);
        done[kind] += rows.length;
        progress?.(done, counts);
        after = rows.at(-1)?.domain ?? after;
      }
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
        if (!(parsed.data.job.domain > last)) throw new ImportError(n, `the job of ${parsed.data.job.domain} is out of domain order`);
        last = parsed.data.job.domain;
        seen.jobs++;
        return { kind: "job", value: parsed.data };
      }
      if (inJobs) throw new ImportError(n, "an entity after the jobs: entities come first");
      const parsed = ExportEntity.safeParse(value);
      if (!parsed.success) throw new ImportError(n, `not a valid entity (${issueOf(parsed.error)})`);
      const domain = parsed.data.entity.domain;
      if (!(domain > last)) throw new ImportError(n, `${domain} is out of domain order, or there twice`);
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
  options: { merge: boolean; progress?: Progress },
): Promise<Imported> {
  return db.transaction(async (tx) => {
    if (!options.merge) {
      const [held] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM entities");
      if ((held?.n ?? 0) > 0) throw new StoreNotEmpty(held?.n ?? 0);
    }
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
      // One statement at a time on the transaction: this batch after the one before.
      await writing;
      writing = (async () => {
        if (batch.entities.length > 0) await writeEntities(tx, batch.entities, done, options.merge);
        if (batch.jobs.length > 0) await writeJobs(tx, batch.jobs, done);
        options.progress?.({ entities: done.entities + done.kept, jobs: done.jobs }, checker.total);
      })();
      // A failed write is awaited (and thrown) at the next flush, or at the end.
      writing.catch(() => undefined);
    };
    try {
      for await (const line of lines) {
        const checked = checker.check(line);
        if (checked.kind === "entity") entities.push(checked.value);
        else if (checked.kind === "job") jobs.push(checked.value.job);
        if (entities.length + jobs.length >= EXPORT_BATCH) await flush();
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

/**
 * One batch of entities: their rows with their search columns worked out as recording a check does
 * (docs/decisions.md#search) and the words of their names, then their claims and changes. Into a
 * store that was empty (`merge` false) nothing can collide, and nothing is looked up first.
 */
async function writeEntities(tx: Queryable, batch: ExportEntity[], done: Imported, merge: boolean): Promise<void> {
  const namesOf = new Map<string, string[]>();
  const rows = batch.map((b) => {
    const columns = searchColumns({
      name: b.entity.name,
      domain: b.entity.domain,
      networkId: b.entity.network_id,
      // What the claims listed now are called, as recording a check takes them.
      claims: b.claims.filter((c) => c.present).flatMap((c) => [c.label, c.issuer_name]),
      description: b.entity.description,
    });
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
  if (merge && domains.length > 0) await tx.query("DELETE FROM claims WHERE domain = ANY($1::text[])", [domains]);
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
       ${merge ? "WHERE NOT EXISTS (SELECT 1 FROM changes c WHERE c.domain = x.domain AND c.kind = x.kind AND c.claim_key = x.claim_key AND c.at = x.at)" : ""}
       ORDER BY x.n
       RETURNING 1 AS n`,
      CHANGE_COLUMNS.map(([c]) => changes.map((row) => row[c])),
    );
    done.changes += added.length;
  }
}

/** The columns of the claims and changes an import writes, with their types, a parameter (an array) each. */
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
] as const;
const CHANGE_COLUMNS = [
  ["domain", "text"],
  ["kind", "text"],
  ["claim_key", "text"],
  ["id", "text"],
  ["at", "timestamptz"],
  ["verified", "boolean"],
  ["status", "text"],
  ["reason", "text"],
] as const;

/** Rows given as one array per column: the engine reads them without parsing JSON (a third faster than jsonb_to_recordset). */
const unnest = (columns: readonly (readonly [string, string])[]) =>
  `unnest(${columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(", ")})`;

/** One batch of queued jobs; a domain already queued keeps the earlier due time. */
async function writeJobs(tx: Queryable, jobs: ExportJob["job"][], done: Imported): Promise<void> {
  await tx.query(
    `INSERT INTO crawl_queue (domain, reason, priority, due_at, backoff_s, attempts, queued_at)
     SELECT domain, reason, priority, due_at, backoff_s, attempts, queued_at
     FROM jsonb_to_recordset($1::jsonb) AS x(domain text, reason text, priority integer, due_at timestamptz, backoff_s integer,
       attempts integer, queued_at timestamptz)
     ON CONFLICT (domain) DO UPDATE SET due_at = LEAST(crawl_queue.due_at, excluded.due_at),
       priority = LEAST(crawl_queue.priority, excluded.priority)`,
    [jsonb(jobs)],
  );
  done.jobs += jobs.length;
}
