/**
 * The queue of background resolutions (docs/decisions.md#discovery), in the store so that a restart
 * loses nothing and several instances on one database share it. Each indexed entity has one row:
 * when it is next re-verified. Discovered domains are added as rows due now. An instance takes due
 * rows with `FOR UPDATE SKIP LOCKED` and holds each under a lease (`locked_until`), so two never run
 * the same job at once and a job whose instance died runs again when its lease ends.
 */
import { parseCredentialId, parseNetworkId, parsePropertyId } from "../protocol/ids.ts";
import type { EntityResult } from "../result/record.ts";
import type { Db, Queryable } from "./db.ts";

/** Re-verification of an entity whose claims all verify: once a day. */
export const RECHECK_OK_S = 24 * 3600;
/** Otherwise after an hour, doubling up to a day. */
export const RECHECK_FIRST_S = 3600;
/** How long an instance holds a job before another may take it (longer than any resolution). */
export const LEASE_S = 300;
/** A job refused for now (the outbound cap, a host's budget) is tried again after this long. */
export const RETRY_S = 60;

/** Lower runs first: seeds, then discovered domains, then re-verification. */
export const PRIORITY = { seed: 0, discovered: 1, recheck: 2 } as const;
export type JobReason = keyof typeof PRIORITY;

export type DiscoveryOptions = {
  /** `IDENT_CRAWL_MAX`: domains the queue holds at most; discoveries beyond it are dropped. */
  max: number;
  /** The cache's fresh window: a domain checked within it is not queued again. */
  freshS: number;
};

/**
 * The domains a result points to (docs/decisions.md#discovery): the properties an accepted entity
 * lists, the owners its fetched property documents name, the holders its fetched credential
 * documents name, and its credentials' issuers. Its own domain is left out.
 */
export function discoveredDomains(result: EntityResult): string[] {
  const found = new Set<string>();
  const add = (domain: string | null | undefined) => {
    if (domain) found.add(domain.toLowerCase());
  };
  if (result.entity.status !== "accepted") return [];
  for (const claim of result.properties) {
    if (claim.id) add(parsePropertyId(claim.id));
    for (const owner of ownersOf(claim.document)) add(parseNetworkId(owner));
  }
  for (const claim of result.credentials) {
    if (claim.id) add(parseCredentialId(claim.id)?.domain);
    const holder = field(claim.document, "ident_entity_id");
    if (holder) add(parseNetworkId(holder));
  }
  found.delete(result.entity.domain.toLowerCase());
  return [...found];
}

function field(value: unknown, key: string): string | null {
  const v = value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
  return typeof v === "string" ? v : null;
}

function ownersOf(document: unknown): string[] {
  const property = document !== null && typeof document === "object" ? (document as Record<string, unknown>).ident_property : undefined;
  const ownership = property !== null && typeof property === "object" ? (property as Record<string, unknown>).ownership : undefined;
  if (!Array.isArray(ownership)) return [];
  return ownership
    .slice(0, 100)
    .map((o) => field(o, "network_id"))
    .filter((o) => o !== null);
}

/**
 * Queues `domains` as due now, each unless it is queued already or was checked within the fresh
 * window, and only while the queue holds fewer than `max`. Returns how many were queued.
 */
export async function enqueue(tx: Queryable, domains: string[], reason: "seed" | "discovered", opts: DiscoveryOptions): Promise<number> {
  if (domains.length === 0) return 0;
  const [room] = await tx.query<{ n: string }>("SELECT count(*) AS n FROM crawl_queue");
  const free = opts.max - Number(room?.n ?? 0);
  if (free <= 0) return 0;
  const rows = await tx.query(
    `INSERT INTO crawl_queue (domain, reason, priority, due_at)
     SELECT d, $2, $3, now() FROM unnest($1::text[]) AS d
     WHERE NOT EXISTS (SELECT 1 FROM entities e WHERE e.domain = d AND e.last_checked_at > now() - make_interval(secs => $4))
     LIMIT $5
     ON CONFLICT (domain) DO NOTHING
     RETURNING domain`,
    [domains.slice(0, 1000), reason, PRIORITY[reason], opts.freshS, free],
  );
  return rows.length;
}

/** docs/notices.md#looking-by-itself: a followed entity is re-checked this often by default (`IDENT_FOLLOW_RECHECK_S`). */
export const FOLLOW_PERIOD_S = 3600;

/**
 * Whether someone follows `domain` (docs/notices.md#looking-by-itself): a live subscription to its
 * entity feed, or to the feed of an issuer of one of its credentials.
 */
const FOLLOWED = `EXISTS (SELECT 1 FROM subscriptions s WHERE s.state = 'active' AND (s.expires_at IS NULL OR s.expires_at > now()) AND (
    (s.topic_kind = 'entity' AND s.topic_domain = $1)
    OR (s.topic_kind = 'issuer' AND s.topic_domain IN (
      SELECT issuer FROM claims WHERE domain = $1 AND kind = 'credentials' AND issuer IS NOT NULL))))`;

/**
 * Schedules the next re-verification of `domain` after a check recorded at `checkedAt`: a day later
 * when every claim verifies, otherwise after an hour, doubling with each failing check up to a day.
 * A followed entity is checked again within `followS` whatever its verdicts, at 90–100 % of it so
 * that entities followed together drift apart (docs/notices.md#looking-by-itself).
 */
export async function scheduleRecheck(
  tx: Queryable,
  domain: string,
  checkedAt: Date,
  allVerified: boolean,
  followS: number = FOLLOW_PERIOD_S,
): Promise<void> {
  // Whether it is followed is asked in the same statement: on the embedded engine a statement is about
  // a millisecond of its CPU, and every check of every cold page comes here.
  await tx.query(
    `WITH f AS (SELECT CASE WHEN ${FOLLOWED} THEN $7::integer END AS within)
     INSERT INTO crawl_queue (domain, reason, priority, due_at, backoff_s)
     SELECT $1, 'recheck', ${PRIORITY.recheck}, $2::timestamptz + make_interval(secs => LEAST($3, coalesce(f.within, $3))), $4 FROM f
     ON CONFLICT (domain) DO UPDATE SET
       reason = 'recheck', priority = ${PRIORITY.recheck}, locked_until = NULL, attempts = 0,
       backoff_s = CASE WHEN $5 THEN 0 ELSE LEAST($6, GREATEST($4, crawl_queue.backoff_s * 2)) END,
       due_at = $2::timestamptz + make_interval(secs => LEAST(coalesce((SELECT within FROM f), $6),
         CASE WHEN $5 THEN $3 ELSE LEAST($6, GREATEST($4, crawl_queue.backoff_s * 2)) END))`,
    [
      domain,
      checkedAt.toISOString(),
      allVerified ? RECHECK_OK_S : RECHECK_FIRST_S,
      allVerified ? 0 : RECHECK_FIRST_S,
      allVerified,
      RECHECK_OK_S,
      Math.round(followS * (0.9 + Math.random() * 0.1)),
    ],
  );
}

/**
 * Brings the next check of each of `domains` within `followS` of now, at a random point of it (the
 * checks of many entities followed at once are spread over the period); a domain not yet indexed is
 * queued. Answers how many it moved or queued.
 */
export async function follow(tx: Queryable, domains: string[], followS: number = FOLLOW_PERIOD_S): Promise<number> {
  if (domains.length === 0) return 0;
  const rows = await tx.query(
    `INSERT INTO crawl_queue (domain, reason, priority, due_at)
     SELECT d, 'recheck', ${PRIORITY.recheck}, now() + make_interval(secs => random() * $2) FROM unnest($1::text[]) AS d
     ON CONFLICT (domain) DO UPDATE SET due_at = LEAST(crawl_queue.due_at, EXCLUDED.due_at)
     RETURNING 1`,
    [domains.slice(0, 10_000), followS],
  );
  return rows.length;
}

/** The entities an issuer's feed follows: the holders of the credentials the index knows it issues. */
export async function holdersOf(db: Queryable, issuer: string): Promise<string[]> {
  const rows = await db.query<{ domain: string }>(
    "SELECT DISTINCT domain FROM claims WHERE kind = 'credentials' AND issuer = $1 LIMIT 10000",
    [issuer],
  );
  return rows.map((r) => r.domain);
}

/** Re-checks of a domain whose entity document was never accepted, after its first check (docs/decisions.md#the-index). */
export const NEVER_ACCEPTED_RECHECKS = 3;
/** How long after its last check a domain never accepted stays in the index. */
export const NEVER_ACCEPTED_KEPT_S = 7 * 24 * 3600;

/**
 * Removes from the index, and from the queue, every domain whose entity document was never accepted
 * and was last checked more than {@link NEVER_ACCEPTED_KEPT_S} before `now` (docs/decisions.md#the-index):
 * a stranger's lookups of names that do not exist leave nothing behind for good. Answers how many left.
 */
export async function pruneNeverAccepted(db: Db, now: Date = new Date()): Promise<number> {
  const gone = await db.transaction(async (tx) => {
    const rows = await tx.query<{ domain: string }>(
      `DELETE FROM entities WHERE NOT ever_accepted AND last_checked_at < $1::timestamptz - make_interval(secs => $2) RETURNING domain`,
      [now.toISOString(), NEVER_ACCEPTED_KEPT_S],
    );
    if (rows.length > 0) await tx.query("DELETE FROM crawl_queue WHERE domain = ANY($1::text[])", [rows.map((r) => r.domain)]);
    return rows.length;
  });
  return gone;
}

/** Takes up to `n` due jobs for this instance, seeds first, then the longest overdue. */
export async function takeJobs(db: Db, n: number, leaseS = LEASE_S): Promise<string[]> {
  if (n <= 0) return [];
  const rows = await db.transaction((tx) =>
    tx.query<{ domain: string }>(
      `UPDATE crawl_queue q SET locked_until = now() + make_interval(secs => $2), attempts = q.attempts + 1
       FROM (SELECT domain FROM crawl_queue
             WHERE due_at <= now() AND (locked_until IS NULL OR locked_until < now())
             ORDER BY priority, due_at LIMIT $1 FOR UPDATE SKIP LOCKED) picked
       WHERE q.domain = picked.domain
       RETURNING q.domain`,
      [n, leaseS],
    ),
  );
  return rows.map((r) => r.domain);
}

/**
 * Lets go of a job. A resolution that was recorded has already moved it to its next check; one that
 * was not (refused for now, or answered from a cache no newer than the record) is due again in `retryS`.
 */
export async function finishJob(db: Queryable, domain: string, retryS = RETRY_S): Promise<void> {
  await db.query(
    `UPDATE crawl_queue SET locked_until = NULL,
       due_at = CASE WHEN due_at <= now() THEN now() + make_interval(secs => $2) ELSE due_at END
     WHERE domain = $1`,
    [domain, retryS],
  );
}

/** What the queue holds, for the status line and the tests. */
export async function queueStats(db: Queryable): Promise<{ queued: number; due: number; running: number }> {
  const [row] = await db.query<{ queued: string; due: string; running: string }>(
    `SELECT count(*) AS queued,
       count(*) FILTER (WHERE due_at <= now() AND (locked_until IS NULL OR locked_until < now())) AS due,
       count(*) FILTER (WHERE locked_until >= now()) AS running
     FROM crawl_queue`,
  );
  return { queued: Number(row?.queued ?? 0), due: Number(row?.due ?? 0), running: Number(row?.running ?? 0) };
}
