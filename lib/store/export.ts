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
import { jsonb, searchColumns } from "./verdicts";

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

const iso = (d: unknown): string | null => (d === null || d === undefined ? null : new Date(d as string | Date).toISOString());
const isoNow = (d: unknown): string => iso(d) ?? "";

/** The keys of each line in their fixed order, from a row of either engine. */
function entityLine(e: Record<string, unknown>, claims: Record<string, unknown>[], changes: Record<string, unknown>[]): string {
  const line: ExportEntity = {
    entity: {
      domain: String(e.domain),
      status: String(e.status),
      network_id: (e.network_id as string | null) ?? null,
      entity_type: (e.entity_type as string | null) ?? null,
      details: (e.details as Record<string, unknown>) ?? {},
      problems: (e.problems as unknown[]) ?? [],
      verified: Number(e.verified),
      unverified: Number(e.unverified),
      first_seen_at: isoNow(e.first_seen_at),
      last_checked_at: isoNow(e.last_checked_at),
      name: (e.name as string | null) ?? null,
      description: (e.description as string | null) ?? null,
      ever_accepted: Boolean(e.ever_accepted),
      failed_checks: Number(e.failed_checks),
    },
    claims: claims.map((c) => ({
      kind: c.kind as ExportEntity["claims"][number]["kind"],
      claim_key: String(c.claim_key),
      id: (c.id as string | null) ?? null,
      label: (c.label as string | null) ?? null,
      issuer: (c.issuer as string | null) ?? null,
      issuer_name: (c.issuer_name as string | null) ?? null,
      present: Boolean(c.present),
      verified: Boolean(c.verified),
      reason: (c.reason as string | null) ?? null,
      stale_reason: (c.stale_reason as string | null) ?? null,
      stale_message: (c.stale_message as string | null) ?? null,
      first_seen_at: isoNow(c.first_seen_at),
      last_checked_at: isoNow(c.last_checked_at),
      last_verified_at: iso(c.last_verified_at),
      verified_since: iso(c.verified_since),
      failing_since: iso(c.failing_since),
    })),
    changes: changes.map((c) => ({
      kind: c.kind as ExportEntity["changes"][number]["kind"],
      claim_key: String(c.claim_key),
      id: (c.id as string | null) ?? null,
      at: isoNow(c.at),
      verified: (c.verified as boolean | null) ?? null,
      status: (c.status as string | null) ?? null,
      reason: (c.reason as string | null) ?? null,
    })),
  };
  return JSON.stringify(line);
}

/** Rows grouped by their `domain`, in the order read. */
function byDomain(rows: Record<string, unknown>[]): Map<string, Record<string, unknown>[]> {
  const out = new Map<string, Record<string, unknown>[]>();
  for (const { domain, ...rest } of rows) {
    const key = String(domain);
    const list = out.get(key);
    if (list) list.push(rest);
    else out.set(key, [rest]);
  }
  return out;
}

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
    let after = "";
    for (;;) {
      const entities = await tx.query(
        `SELECT domain, status, network_id, entity_type, details, problems, verified, unverified, first_seen_at, last_checked_at,
           name, description, ever_accepted, failed_checks
         FROM entities WHERE domain COLLATE "C" > $1 ORDER BY domain COLLATE "C" LIMIT $2`,
        [after, EXPORT_BATCH],
      );
      if (entities.length === 0) break;
      const domains = entities.map((e) => String(e.domain));
      const [claims, changes] = await Promise.all([
        readClaims(tx, domains),
        tx.query(
          `SELECT domain, kind, claim_key, id, at, verified, status, reason FROM changes WHERE domain = ANY($1::text[]) ORDER BY domain, seq`,
          [domains],
        ),
      ]);
      const claimsOf = byDomain(claims);
      const changesOf = byDomain(changes);
      let chunk = "";
      for (const e of entities) chunk += `${entityLine(e, claimsOf.get(String(e.domain)) ?? [], changesOf.get(String(e.domain)) ?? [])}\n`;
      await write(chunk);
      done.entities += entities.length;
      progress?.(done, counts);
      after = domains.at(-1) ?? after;
    }
    after = "";
    for (;;) {
      const jobs = await tx.query(
        `SELECT domain, reason, priority, due_at, backoff_s, attempts, queued_at FROM crawl_queue
         WHERE domain COLLATE "C" > $1 ORDER BY domain COLLATE "C" LIMIT $2`,
        [after, EXPORT_BATCH],
      );
      if (jobs.length === 0) break;
      let chunk = "";
      for (const j of jobs) {
        const line: ExportJob = {
          job: {
            domain: String(j.domain),
            reason: String(j.reason),
            priority: Number(j.priority),
            due_at: isoNow(j.due_at),
            backoff_s: Number(j.backoff_s),
            attempts: Number(j.attempts),
            queued_at: isoNow(j.queued_at),
          },
        };
        chunk += `${JSON.stringify(line)}\n`;
      }
      await write(chunk);
      done.jobs += jobs.length;
      progress?.(done, counts);
      after = String(jobs.at(-1)?.domain ?? after);
    }
    return counts;
  });
}

/** The claims of `domains`, in domain, kind and key order, bytewise. */
function readClaims(tx: Queryable, domains: string[]) {
  return tx.query(
    `SELECT domain, kind, claim_key, id, label, issuer, issuer_name, present, verified, reason, stale_reason, stale_message,
       first_seen_at, last_checked_at, last_verified_at, verified_since, failing_since
     FROM claims WHERE domain = ANY($1::text[]) ORDER BY domain COLLATE "C", kind COLLATE "C", claim_key COLLATE "C"`,
    [domains],
  );
}

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
 * Reads the whole file once, checking every line (the header first, entities then jobs, each in
 * strictly increasing domain order, counts as the header says); throws an {@link ImportError} naming
 * the first bad line. Memory holds one line.
 */
export async function checkExport(lines: AsyncIterable<NumberedLine>): Promise<Counts> {
  let header: ExportHeader | null = null;
  const seen = { entities: 0, claims: 0, changes: 0, jobs: 0 };
  let last = "";
  let inJobs = false;
  let n = 0;
  for await (const line of lines) {
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
      continue;
    }
    const isJob = value !== null && typeof value === "object" && "job" in value;
    if (isJob) {
      const parsed = ExportJob.safeParse(value);
      if (!parsed.success) throw new ImportError(n, `not a valid job (${issueOf(parsed.error)})`);
      if (!inJobs) last = "";
      inJobs = true;
      if (!(parsed.data.job.domain > last)) throw new ImportError(n, `the job of ${parsed.data.job.domain} is out of domain order`);
      last = parsed.data.job.domain;
      seen.jobs++;
      continue;
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
  }
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
}

/** What an import did. */
export type Imported = { entities: number; kept: number; claims: number; changes: number; jobs: number };

/**
 * Loads a file already checked by {@link checkExport} into `db`, in one transaction: all of it or
 * nothing. Without `merge`, a store that holds an entity is refused. With it, an entity the store
 * has checked as late or later is kept as it is; otherwise the file's row and claims replace it.
 * Changes of verdict are kept from both, each once; a job keeps the earlier due time.
 */
export async function importIndex(
  db: Db,
  lines: AsyncIterable<NumberedLine>,
  options: { merge: boolean; total?: Counts; progress?: Progress },
): Promise<Imported> {
  return db.transaction(async (tx) => {
    if (!options.merge) {
      const [held] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM entities");
      if ((held?.n ?? 0) > 0) throw new StoreNotEmpty(held?.n ?? 0);
    }
    const done: Imported = { entities: 0, kept: 0, claims: 0, changes: 0, jobs: 0 };
    const total = options.total ?? { entities: 0, claims: 0, changes: 0, jobs: 0 };
    let entities: ExportEntity[] = [];
    let jobs: ExportJob["job"][] = [];
    const flush = async () => {
      if (entities.length > 0) await writeEntities(tx, entities, done);
      if (jobs.length > 0) await writeJobs(tx, jobs, done);
      entities = [];
      jobs = [];
      options.progress?.({ entities: done.entities + done.kept, jobs: done.jobs }, total);
    };
    let first = true;
    for await (const line of lines) {
      if (first) {
        first = false;
        continue;
      }
      const value = JSON.parse(line.text) as ExportEntity | ExportJob;
      if ("job" in value) jobs.push(value.job);
      else entities.push(value);
      if (entities.length + jobs.length >= EXPORT_BATCH) await flush();
    }
    await flush();
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

/** One batch of entities: their rows, claims and changes, then their search columns (docs/decisions.md#search). */
async function writeEntities(tx: Queryable, batch: ExportEntity[], done: Imported): Promise<void> {
  const written = await tx.query<{ domain: string }>(
    `INSERT INTO entities (domain, status, network_id, entity_type, details, problems, verified, unverified, first_seen_at, last_checked_at,
       name, description, ever_accepted, failed_checks)
     SELECT domain, status, network_id, entity_type, details, problems, verified, unverified, first_seen_at, last_checked_at,
       name, description, ever_accepted, failed_checks
     FROM jsonb_to_recordset($1::jsonb) AS x(domain text, status text, network_id text, entity_type text, details jsonb, problems jsonb,
       verified integer, unverified integer, first_seen_at timestamptz, last_checked_at timestamptz, name text, description text,
       ever_accepted boolean, failed_checks integer)
     ON CONFLICT (domain) DO UPDATE SET status = excluded.status, network_id = excluded.network_id, entity_type = excluded.entity_type,
       details = excluded.details, problems = excluded.problems, verified = excluded.verified, unverified = excluded.unverified,
       first_seen_at = LEAST(entities.first_seen_at, excluded.first_seen_at), last_checked_at = excluded.last_checked_at,
       name = excluded.name, description = excluded.description, ever_accepted = entities.ever_accepted OR excluded.ever_accepted,
       failed_checks = excluded.failed_checks
     WHERE entities.last_checked_at < excluded.last_checked_at
     RETURNING domain`,
    [jsonb(batch.map((b) => b.entity))],
  );
  const replaced = new Set(written.map((w) => w.domain));
  const taken = batch.filter((b) => replaced.has(b.entity.domain));
  done.entities += taken.length;
  done.kept += batch.length - taken.length;
  const domains = taken.map((b) => b.entity.domain);
  if (domains.length > 0) {
    await tx.query("DELETE FROM claims WHERE domain = ANY($1::text[])", [domains]);
    const claims = taken.flatMap((b) => b.claims.map((c) => Object.assign({ domain: b.entity.domain }, c)));
    if (claims.length > 0) {
      await tx.query(
        `INSERT INTO claims (domain, kind, claim_key, id, label, issuer, issuer_name, present, verified, reason, stale_reason, stale_message,
           first_seen_at, last_checked_at, last_verified_at, verified_since, failing_since)
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(domain text, kind text, claim_key text, id text, label text, issuer text,
           issuer_name text, present boolean, verified boolean, reason text, stale_reason text, stale_message text,
           first_seen_at timestamptz, last_checked_at timestamptz, last_verified_at timestamptz, verified_since timestamptz,
           failing_since timestamptz)`,
        [jsonb(claims)],
      );
      done.claims += claims.length;
    }
  }
  // Changes from every entity of the file, the store's own kept: each change once, in the file's order.
  let n = 0;
  const changes = batch.flatMap((b) => b.changes.map((c) => Object.assign({ domain: b.entity.domain, n: n++ }, c)));
  if (changes.length > 0) {
    const added = await tx.query<{ n: number }>(
      `INSERT INTO changes (domain, kind, claim_key, id, at, verified, status, reason)
       SELECT x.domain, x.kind, x.claim_key, x.id, x.at, x.verified, x.status, x.reason
       FROM jsonb_to_recordset($1::jsonb) AS x(domain text, n integer, kind text, claim_key text, id text, at timestamptz,
         verified boolean, status text, reason text)
       WHERE NOT EXISTS (SELECT 1 FROM changes c WHERE c.domain = x.domain AND c.kind = x.kind AND c.claim_key = x.claim_key AND c.at = x.at)
       ORDER BY x.n
       RETURNING 1 AS n`,
      [jsonb(changes)],
    );
    done.changes += added.length;
  }
  if (domains.length > 0) {
    // The search columns and the words of names, worked out as recording a check does.
    await tx.query(
      `UPDATE entities e SET ${searchColumns(
        "e.name",
        "e.description",
        `(SELECT string_agg(concat_ws(' ', c.label, c.issuer_name), ' ' ORDER BY c.kind, c.claim_key) FROM claims c WHERE c.domain = e.domain AND c.present)`,
      )} WHERE e.domain = ANY($1::text[])`,
      [domains],
    );
    await tx.query(
      `INSERT INTO search_words (word)
       SELECT DISTINCT w FROM entities, regexp_split_to_table(names_plain, '[^[:alnum:]]+') AS w
       WHERE domain = ANY($1::text[]) AND length(w) >= 3 ON CONFLICT DO NOTHING`,
      [domains],
    );
  }
}

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
