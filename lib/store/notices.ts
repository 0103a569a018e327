/**
 * Notices (docs/notices.md): who waits for which feed, and each change to deliver to each of them.
 *
 * A change of verdict is committed with its position (lib/store/positions.ts) in the transaction
 * that records it: that row is the outbox. `fanOut` reads the changes past the fleet's one cursor
 * (`notice_cursor`, locked while it runs, so one instance at a time hands them out) and writes one
 * delivery per change and subscriber, in the same transaction that moves the cursor: a change is
 * handed out once, and never lost. Deliveries are taken under a lease with `FOR UPDATE SKIP LOCKED`
 * (as the crawl queue is, lib/store/queue.ts), so two instances never send the same one at once and
 * one whose instance died is sent again when its lease ends, with the same id.
 */
import { randomBytes } from "node:crypto";
import type { Db, Queryable } from "./db.ts";
import type { PlacedChange } from "./overview.ts";

export type Via = "webhook" | "websub";
/** The three feeds one can follow (docs/api.md#feeds): every change, an entity's, an issuer's. */
export type TopicKind = "changes" | "entity" | "issuer";
export type Topic = { url: string; kind: TopicKind; domain: string | null };

export type Subscription = {
  id: string;
  via: Via;
  topic: string;
  topic_kind: TopicKind;
  topic_domain: string | null;
  callback: string;
  /** The webhook's `whsec_…`, or WebSub's `hub.secret`; null: WebSub without a secret (unsigned). */
  secret: string | null;
  client: string;
  state: "active" | "ended";
  ended_reason: string | null;
  created_at: string;
  /** WebSub's lease; null for a webhook (it lasts until deleted, or ended for failing). */
  expires_at: string | null;
  failing_since: string | null;
};

/** One delivery as its subscription's owner sees it (docs/notices.md#what-the-owner-sees). */
export type DeliveryRecord = {
  id: string;
  /** The change's cursor position; null for a test delivery. */
  position: string | null;
  created_at: string;
  /** `delivered`, `gave_up` (a day of failures), or null while it is still tried. */
  outcome: "delivered" | "gave_up" | null;
  attempts: number;
  tried_at: string | null;
  /** The callback's HTTP status at the last try; null when none came. */
  status: number | null;
  /** Why the last try failed, in words; null when it did not. */
  error: string | null;
};

/** A delivery taken to send: its subscription, and its change (null for a test). */
export type DueDelivery = { id: string; attempts: number; created_at: string; subscription: Subscription; change: PlacedChange | null };

/** Retried with growing waits for up to a day (docs/notices.md#delivery). */
export const RETRY_FOR_S = 24 * 3600;
/** The first wait after a failure; each next one doubles, up to {@link RETRY_MAX_WAIT_S}. */
export const RETRY_FIRST_S = 30;
export const RETRY_MAX_WAIT_S = 3600;
/** A subscription whose every delivery failed for this long is ended. */
export const FAILING_ENDS_S = 7 * 24 * 3600;
/** How long a taken delivery is held before another instance may send it (three times a callback's longest deadline). */
export const DELIVERY_LEASE_S = 180;
/** Finished deliveries are kept this long, for their owners to see. */
export const DELIVERIES_KEPT_S = 7 * 24 * 3600;
/** Ended subscriptions are kept this long, for their owners to see why. */
export const ENDED_KEPT_S = 30 * 24 * 3600;

/** The wait after the `attempts`-th failed try. */
export const retryWaitS = (attempts: number): number => Math.min(RETRY_MAX_WAIT_S, RETRY_FIRST_S * 2 ** Math.max(0, attempts - 1));

type SubscriptionRow = Omit<Subscription, "created_at" | "expires_at" | "failing_since"> & {
  created_at: Date;
  expires_at: Date | null;
  failing_since: Date | null;
};
const iso = (d: Date | null) => (d === null ? null : d.toISOString());
const toSubscription = (r: SubscriptionRow): Subscription =>
  Object.assign({}, r, { created_at: r.created_at.toISOString(), expires_at: iso(r.expires_at), failing_since: iso(r.failing_since) });

const SUBSCRIPTION_COLUMNS =
  "id, via, topic, topic_kind, topic_domain, callback, secret, client, state, ended_reason, created_at, expires_at, failing_since";

/** A new subscription's id: 128 random bits. */
export const newSubscriptionId = (via: Via): string => `${via === "webhook" ? "wh" : "ws"}_${randomBytes(16).toString("base64url")}`;

export type NewSubscription = {
  via: Via;
  topic: Topic;
  callback: string;
  secret: string | null;
  client: string;
  /** WebSub's lease in seconds; null: none. */
  leaseS: number | null;
};

/**
 * Adds a subscription (or, for WebSub, renews the one of the same topic and callback: its lease,
 * secret and client) unless `client` holds `maxPerClient` already; the subscription, or how many the
 * client holds. It receives the changes committed after it.
 */
export async function addSubscription(
  db: Db,
  s: NewSubscription,
  maxPerClient: number,
): Promise<{ ok: true; subscription: Subscription; renewed: boolean } | { ok: false; held: number }> {
  return db.transaction(async (tx) => {
    // One client's subscriptions are counted one at a time, so that two at once cannot both pass.
    await tx.query("SELECT pg_advisory_xact_lock(7316011, hashtext($1))", [s.client]);
    const expires = s.leaseS === null ? null : new Date(Date.now() + s.leaseS * 1000).toISOString();
    if (s.via === "websub") {
      const [renewed] = await tx.query<SubscriptionRow>(
        `UPDATE subscriptions SET secret = $3, client = $4, expires_at = $5::timestamptz
         WHERE via = 'websub' AND state <> 'ended' AND topic = $1 AND callback = $2 RETURNING ${SUBSCRIPTION_COLUMNS}`,
        [s.topic.url, s.callback, s.secret, s.client, expires],
      );
      if (renewed) return { ok: true, subscription: toSubscription(renewed), renewed: true };
    }
    const [held] = await tx.query<{ n: string }>("SELECT count(*) AS n FROM subscriptions WHERE client = $1 AND state <> 'ended'", [
      s.client,
    ]);
    if (Number(held?.n ?? 0) >= maxPerClient) return { ok: false, held: Number(held?.n ?? 0) };
    const [row] = await tx.query<SubscriptionRow>(
      `INSERT INTO subscriptions (id, via, topic, topic_kind, topic_domain, callback, secret, client, state, expires_at, from_position)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'active', $9::timestamptz, (SELECT last FROM change_positions))
       RETURNING ${SUBSCRIPTION_COLUMNS}`,
      [newSubscriptionId(s.via), s.via, s.topic.url, s.topic.kind, s.topic.domain, s.callback, s.secret, s.client, expires],
    );
    if (!row) throw new Error("the subscription was not written");
    return { ok: true, subscription: toSubscription(row), renewed: false };
  });
}

/** The subscription `id`, ended or not; null when there is none. */
export async function getSubscription(db: Queryable, id: string): Promise<Subscription | null> {
  const [row] = await db.query<SubscriptionRow>(`SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions WHERE id = $1`, [id]);
  return row ? toSubscription(row) : null;
}

/** The live WebSub subscription of `topic` for `callback`; null when there is none. */
export async function websubOf(db: Queryable, topic: string, callback: string): Promise<Subscription | null> {
  const [row] = await db.query<SubscriptionRow>(
    `SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions WHERE via = 'websub' AND state <> 'ended' AND topic = $1 AND callback = $2`,
    [topic, callback],
  );
  return row ? toSubscription(row) : null;
}

/** Live subscriptions `client` holds. */
export async function heldBy(db: Queryable, client: string): Promise<number> {
  const [row] = await db.query<{ n: string }>("SELECT count(*) AS n FROM subscriptions WHERE client = $1 AND state <> 'ended'", [client]);
  return Number(row?.n ?? 0);
}

/** Ends a subscription, saying why; its deliveries not yet sent are not sent. Whether it was live. */
export async function endSubscription(db: Queryable, id: string, reason: string): Promise<boolean> {
  const rows = await db.query(
    "UPDATE subscriptions SET state = 'ended', ended_reason = $2, ended_at = now() WHERE id = $1 AND state <> 'ended' RETURNING 1",
    [id, reason],
  );
  return rows.length > 0;
}

/** A subscription's latest deliveries, newest first. */
export async function deliveriesOf(db: Queryable, id: string, limit = 20): Promise<DeliveryRecord[]> {
  const rows = await db.query<Omit<DeliveryRecord, "created_at" | "tried_at"> & { created_at: Date; tried_at: Date | null }>(
    `SELECT id, position::text AS position, created_at, outcome, attempts, tried_at, status, error FROM deliveries
     WHERE subscription_id = $1 ORDER BY created_at DESC, id LIMIT $2`,
    [id, limit],
  );
  return rows.map((r) => Object.assign({}, r, { created_at: r.created_at.toISOString(), tried_at: iso(r.tried_at) }));
}

/** Queues a test delivery to a subscription (`POST /api/webhooks/{id}/test`); its id. */
export async function queueTest(db: Queryable, id: string): Promise<string> {
  const delivery = `msg_test_${randomBytes(12).toString("base64url")}`;
  await db.query("INSERT INTO deliveries (id, subscription_id) VALUES ($1, $2)", [delivery, id]);
  return delivery;
}

/**
 * Which subscriptions a change goes to: a live one whose topic is every change, the change's entity,
 * or (for a credential) its issuer, and which began before the change was committed. `b` is the
 * change's row.
 */
const SUBSCRIBED = `s.state = 'active' AND (s.expires_at IS NULL OR s.expires_at > now()) AND b.position > s.from_position AND (
     s.topic_kind = 'changes'
  OR (s.topic_kind = 'entity' AND s.topic_domain = b.domain)
  OR (s.topic_kind = 'issuer' AND b.kind = 'credentials' AND EXISTS (
        SELECT 1 FROM claims c WHERE c.domain = b.domain AND c.kind = 'credentials' AND c.claim_key = b.claim_key AND c.issuer = s.topic_domain)))`;

/** Deliveries made by one hand-out past which the embedded engine's planner is told of them (`countForPlanner`). */
const ANALYZE_AFTER_DELIVERIES = 1000;

/**
 * Hands out the changes committed past the cursor, up to `batch` of them: one delivery per change
 * and subscriber, its id the same however often this runs (`msg_` and a hash of the subscription and
 * the position), written with the cursor's move in one transaction. Another instance handing out now
 * holds the cursor: this one does nothing (0). Answers how many changes it handed out, and how many
 * deliveries that made.
 */
export async function fanOut(db: Db, batch = 500): Promise<{ changes: number; made: number }> {
  const handed = await db.transaction(async (tx) => {
    const [cursor] = await tx.query<{ last: string }>("SELECT last::text AS last FROM notice_cursor FOR UPDATE SKIP LOCKED");
    if (!cursor) return { changes: 0, made: 0 };
    const [span] = await tx.query<{ n: string; top: string | null }>(
      `SELECT count(*) AS n, max(position)::text AS top FROM
         (SELECT position FROM changes WHERE position > $1::bigint ORDER BY position LIMIT $2) p`,
      [cursor.last, batch],
    );
    if (!span?.top) return { changes: 0, made: 0 };
    // Each change's subscribers are ranked 1, 2, 3, …: deliveries are sent rank first (`takeDue`), so
    // the first subscriber of a new change goes before the ten-thousandth of an older one.
    const [made] = await tx.query<{ n: string }>(
      `WITH made AS (
         INSERT INTO deliveries (id, subscription_id, position, rank)
         SELECT 'msg_' || md5(s.id || ':' || b.position), s.id, b.position, row_number() OVER (PARTITION BY b.position ORDER BY s.id)
         FROM changes b JOIN subscriptions s ON ${SUBSCRIBED}
         WHERE b.position > $1::bigint AND b.position <= $2::bigint
         ON CONFLICT (id) DO NOTHING RETURNING 1)
       SELECT count(*) AS n FROM made`,
      [cursor.last, span.top],
    );
    await tx.query("UPDATE notice_cursor SET last = $1::bigint", [span.top]);
    return { changes: Number(span.n), made: Number(made?.n ?? 0) };
  });
  if (db.engine === "pglite" && handed.made >= ANALYZE_AFTER_DELIVERIES) await countForPlanner(db, handed.made);
  return handed;
}

/** Whether any subscription is active: with none, no change makes a delivery and none is due (docs/notices.md#delivery). */
export async function anySubscribed(db: Queryable): Promise<boolean> {
  const [row] = await db.query<{ yes: boolean }>("SELECT EXISTS (SELECT 1 FROM subscriptions WHERE state = 'active') AS yes");
  return row?.yes === true;
}

/**
 * The embedded engine has no autovacuum (PostgreSQL's counts a crowd within a minute, alongside):
 * until its planner knows of a crowd of subscribers and their deliveries, `takeDue` sorted them all on
 * every look (10,000: 76–115 ms, against 16–21 once counted), and the notifier sent a fraction of
 * what it could. Counted once a hand-out made a tenth of the deliveries the planner knows of, so a
 * large outbox is not sampled again for every crowd (200 ms at a million).
 */
async function countForPlanner(db: Db, made: number): Promise<void> {
  const [planned] = await db.query<{ n: number }>("SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'deliveries'");
  if (made >= 0.1 * Math.max(0, planned?.n ?? 0)) await db.query("ANALYZE deliveries, subscriptions");
}

type DueRow = SubscriptionRow & {
  delivery_id: string;
  attempts: number;
  delivery_created_at: Date;
  c_position: string | null;
  c_domain: string | null;
  c_name: string | null;
  c_kind: PlacedChange["kind"] | null;
  c_claim_key: string | null;
  c_id: string | null;
  c_label: string | null;
  c_at: Date | null;
  c_status: string | null;
  c_verified: boolean | null;
  c_reason: string | null;
};

/** A callback's host, in SQL, as the notifier counts its deliveries in flight. */
const CALLBACK_HOST = "lower(substring(s.callback from '^https://([^/:?#]+)'))";

/**
 * Takes up to `n` deliveries due now, each held for `leaseS`, with its subscription and change: the
 * lowest rank within its change first (a new change's first subscribers before an older change's
 * ten-thousandth), then the longest due. None goes to a host of `busy` (its deliveries in flight are as many as
 * it may have), and at most `perHost` to any one host: a slow host's deliveries wait in the store,
 * not in this instance, so they hold none of the others' room. None of an ended subscription is taken
 * (`pruneNotices` gives them up); one whose change is gone (its entity left the index) is given up.
 */
export async function takeDue(
  db: Db,
  n: number,
  leaseS = DELIVERY_LEASE_S,
  busy: readonly string[] = [],
  perHost = Number.MAX_SAFE_INTEGER,
): Promise<DueDelivery[]> {
  if (n <= 0) return [];
  const rows = await db.transaction(async (tx) =>
    tx.query<DueRow>(
      `WITH due AS (
         SELECT d.id, ${CALLBACK_HOST} AS host FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
         WHERE d.outcome IS NULL AND d.due_at <= now() AND (d.locked_until IS NULL OR d.locked_until < now())
           AND s.state = 'active' AND ${CALLBACK_HOST} <> ALL($3::text[])
         ORDER BY d.rank, d.due_at LIMIT $1::integer * 4
       ), spread AS (
         SELECT id, row_number() OVER (PARTITION BY host) AS nth FROM due
       ), picked AS (
         SELECT d.id FROM deliveries d JOIN spread ON spread.id = d.id
         WHERE spread.nth <= $4 AND d.outcome IS NULL AND (d.locked_until IS NULL OR d.locked_until < now())
         ORDER BY d.rank, d.due_at LIMIT $1 FOR UPDATE OF d SKIP LOCKED
       ), taken AS (
         UPDATE deliveries d SET locked_until = now() + make_interval(secs => $2), attempts = d.attempts + 1
         FROM picked WHERE d.id = picked.id
         RETURNING d.id, d.subscription_id, d.position, d.attempts, d.created_at
       )
       SELECT t.id AS delivery_id, t.attempts, t.created_at AS delivery_created_at,
         s.id, s.via, s.topic, s.topic_kind, s.topic_domain, s.callback, s.secret, s.client, s.state, s.ended_reason,
         s.created_at, s.expires_at, s.failing_since,
         ch.position::text AS c_position, ch.domain AS c_domain, e.name AS c_name, ch.kind AS c_kind, ch.claim_key AS c_claim_key,
         ch.id AS c_id, c.label AS c_label, ch.at AS c_at, ch.status AS c_status, ch.verified AS c_verified, ch.reason AS c_reason
       FROM taken t JOIN subscriptions s ON s.id = t.subscription_id
       LEFT JOIN changes ch ON ch.position = t.position
       LEFT JOIN entities e ON e.domain = ch.domain
       LEFT JOIN claims c ON c.domain = ch.domain AND c.kind = ch.kind AND c.claim_key = ch.claim_key
       ORDER BY t.created_at`,
      [n, leaseS, [...busy], Math.min(perHost, 1_000_000)],
    ),
  );
  const due: DueDelivery[] = [];
  for (const r of rows) {
    const change = changeOf(r);
    const testOnly = r.delivery_id.startsWith("msg_test_");
    if (change === null && !testOnly) {
      await settle(db, r.delivery_id, { outcome: "gave_up", status: null, error: "the change is no longer in the index" });
      continue;
    }
    due.push({
      id: r.delivery_id,
      attempts: r.attempts,
      created_at: r.delivery_created_at.toISOString(),
      subscription: toSubscription(r),
      change,
    });
  }
  return due;
}

function changeOf(r: DueRow): PlacedChange | null {
  if (r.c_position === null || r.c_domain === null || r.c_kind === null || r.c_at === null) return null;
  return {
    position: r.c_position,
    domain: r.c_domain,
    name: r.c_name,
    kind: r.c_kind,
    claim_key: r.c_claim_key ?? "",
    id: r.c_id,
    label: r.c_label,
    at: r.c_at.toISOString(),
    status: r.c_status,
    verified: r.c_verified,
    reason: r.c_reason,
  };
}

async function settle(
  db: Queryable,
  id: string,
  s: { outcome: "delivered" | "gave_up" | null; status: number | null; error: string | null; dueInS?: number },
): Promise<void> {
  await db.query(
    `UPDATE deliveries SET outcome = $2, status = $3, error = $4, tried_at = now(), locked_until = NULL,
       due_at = now() + make_interval(secs => $5) WHERE id = $1`,
    [id, s.outcome, s.status, s.error, s.dueInS ?? 0],
  );
}

/** A delivery that will not be sent, and why. */
export const giveUp = (db: Queryable, id: string, error: string): Promise<void> =>
  settle(db, id, { outcome: "gave_up", status: null, error });

/** A delivery the callback took (2xx): done, and its subscription no longer failing. */
export async function markDelivered(db: Queryable, d: DueDelivery, status: number): Promise<void> {
  await settle(db, d.id, { outcome: "delivered", status, error: null });
  if (d.subscription.failing_since !== null)
    await db.query("UPDATE subscriptions SET failing_since = NULL WHERE id = $1", [d.subscription.id]);
}

/**
 * A try that failed: tried again after a growing wait while within a day of the delivery's making,
 * given up after. A subscription whose every delivery has failed for a week is ended with the
 * last error (docs/notices.md#delivery). Answers whether it ended the subscription.
 */
export async function markFailed(db: Queryable, d: DueDelivery, status: number | null, error: string, now = Date.now()): Promise<boolean> {
  const wait = retryWaitS(d.attempts);
  const over = now + wait * 1000 > Date.parse(d.created_at) + RETRY_FOR_S * 1000;
  await settle(db, d.id, { outcome: over ? "gave_up" : null, status, error, dueInS: wait });
  const [sub] = await db.query<{ failing_since: Date }>(
    "UPDATE subscriptions SET failing_since = coalesce(failing_since, now()) WHERE id = $1 RETURNING failing_since",
    [d.subscription.id],
  );
  if (!sub || now - sub.failing_since.getTime() < FAILING_ENDS_S * 1000) return false;
  return endSubscription(db, d.subscription.id, `every delivery failed for 7 days; the last: ${error}`);
}

/**
 * Tidies the notices (hourly): leases that ran out end their WebSub subscriptions, finished deliveries
 * leave after a week, ended subscriptions after 30 days. Answers what it removed.
 */
export async function pruneNotices(db: Db): Promise<{ leases: number; deliveries: number; subscriptions: number }> {
  return db.transaction(async (tx) => {
    await tx.query(
      `UPDATE deliveries d SET outcome = 'gave_up', error = 'the subscription ended before it was sent', tried_at = now()
       FROM subscriptions s WHERE d.subscription_id = s.id AND d.outcome IS NULL AND s.state = 'ended'`,
    );
    const leases = await tx.query(
      `UPDATE subscriptions SET state = 'ended', ended_reason = 'its lease ended', ended_at = now()
       WHERE state = 'active' AND expires_at < now() RETURNING 1`,
    );
    const deliveries = await tx.query(
      "DELETE FROM deliveries WHERE outcome IS NOT NULL AND tried_at < now() - make_interval(secs => $1) RETURNING 1",
      [DELIVERIES_KEPT_S],
    );
    const subscriptions = await tx.query(
      "DELETE FROM subscriptions WHERE state = 'ended' AND ended_at < now() - make_interval(secs => $1) RETURNING 1",
      [ENDED_KEPT_S],
    );
    return { leases: leases.length, deliveries: deliveries.length, subscriptions: subscriptions.length };
  });
}

/**
 * Lets go of every lease: on the embedded engine, whose folder one process holds at a time, a lease
 * found at start is that of a process that died, and its deliveries are due now rather than when
 * the lease runs out (docs/notices.md#delivery). Answers how many.
 */
export async function releaseLeases(db: Queryable): Promise<number> {
  const rows = await db.query("UPDATE deliveries SET locked_until = NULL WHERE outcome IS NULL AND locked_until IS NOT NULL RETURNING 1");
  return rows.length;
}
