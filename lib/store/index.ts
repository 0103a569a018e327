/**
 * The index (docs/decisions.md#the-index): opened once at start (the engine, which holds the lock; the
 * migrations), then used by whatever resolves. A store that fails later never fails a lookup: the
 * result is answered as it is and the failure is logged.
 */
import type { Claim, EntityResult, SearchResponse } from "../result/record.ts";
import { openDb, StoreError, type Db, type EngineState, type StoreLocation } from "./db.ts";
import { migrate } from "./migrations.ts";
import { history, preview, type ClaimKind, type History } from "./verdicts.ts";
import { FOLLOW_PERIOD_S, pruneNeverAccepted, type DiscoveryOptions } from "./queue.ts";
import { createRecorder } from "./recorder.ts";
import { decodeCursor, searchIndex, type IndexSearch } from "./search.ts";
import { issuedBy, type IssuedPage } from "./issued.ts";
import { keepStatistics } from "./statistics.ts";
import { extend } from "../objects.ts";
import type { FeedChange } from "./feeds.ts";
import {
  changesPage,
  indexCounts,
  positionOf,
  topIssuers,
  type ChangeCursor,
  type ChangePage,
  type IndexCounts,
  type TopIssuer,
} from "./overview.ts";

/** What the home page shows of the index. */
export type Overview = { counts: IndexCounts; latest: FeedChange[]; issuers: TopIssuer[] };

export { StoreError } from "./db.ts";
export type { StoreLocation } from "./db.ts";
export { CLAIM_COLUMNS } from "./columns.ts";
export { interruptible, openDb, type Db, type Queryable, type Row, type Tx } from "./db.ts";
export {
  bytesAfter,
  EXPORT_SCHEMA,
  exportIndex,
  ImportError,
  importIndex,
  StoreNotEmpty,
  type ExportEntity,
  type ExportHeader,
  type ExportJob,
  type NumberedLine,
  type Progress,
} from "./export.ts";
export { changeId, entityChanges, issuerChanges, type FeedChange } from "./feeds.ts";
export { migrate, MIGRATIONS, recount } from "./migrations.ts";
export {
  CHANGES_DEFAULT,
  CHANGES_MAX,
  changesAnswer,
  cursorOf,
  decodeChangeCursor,
  indexCounts,
  Changes,
  ChangeCursorText,
  ChangeItem,
  type PlacedChange,
} from "./overview.ts";
export { discoveredDomains, enqueue, finishJob, follow, FOLLOW_PERIOD_S, holdersOf, queueStats, takeJobs } from "./queue.ts";
export {
  addSubscription,
  deliveriesOf,
  endSubscription,
  fanOut,
  getSubscription,
  heldBy,
  markDelivered,
  markFailed,
  pruneNotices,
  queueTest,
  releaseLeases,
  retryWaitS,
  takeDue,
  websubOf,
  DELIVERY_LEASE_S,
  FAILING_ENDS_S,
  RETRY_FOR_S,
  type DeliveryRecord,
  type DueDelivery,
  type Subscription,
  type Topic,
  type TopicKind,
  type Via,
} from "./notices.ts";
export {
  decodeCursor,
  encodeCursor,
  MAX_SEARCH_LENGTH,
  parseSearchText,
  SEARCH_TIMEOUT_MS,
  searchIndex,
  searchTerms,
  IndexSearch,
} from "./search.ts";
export { decodeIssuedCursor, issuedBy, type IssuedCredential, type IssuedPage } from "./issued.ts";
export { SITEMAP_URLS, sitemapAfter, sitemapChunks, sitemapCount, type SitemapEntry } from "./sitemap.ts";
export { entityStanding, type Standing } from "./standing.ts";
export { analyzeIfBehind, statisticsBehind } from "./statistics.ts";
export { History, record, reindexSearch } from "./verdicts.ts";

export type Store = {
  readonly engine: Db["engine"];
  /**
   * What keeps results from being recorded now (/readyz): `restarting` while the supervisor starts a
   * dead embedded engine again, `no space` while the disk is full; else `running`.
   */
  state(): EngineState | "no space";
  /**
   * Records one entity result and returns it annotated; never throws. Records wait their turn at the
   * engine fairly: `client`'s behind those of clients with fewer waiting (docs/architecture.md#fair-queues).
   */
  record(result: EntityResult, client?: string): Promise<EntityResult>;
  /** Records every result of a response and returns it annotated, as `record` does; never throws. */
  recordResponse(response: SearchResponse, client?: string): Promise<SearchResponse>;
  history(domain: string): Promise<History | null>;
  /** How `record` will annotate each claim of a check at `fetchedAt`; null when the index cannot say. Never throws. */
  preview(domain: string, fetchedAt: string): Promise<((kind: ClaimKind, claim: Claim, index: number) => Claim) | null>;
  /**
   * One page of a search of the index (docs/decisions.md#search) for text already checked with
   * `parseSearchText`; null for a cursor this index did not hand out.
   */
  search(text: string, cursor?: string | null): Promise<IndexSearch | null>;
  /**
   * One page of the credentials the index knows `issuer` issues, with their holders, after `cursor`
   * (a page's `next`); null for a cursor this index did not hand out.
   */
  issuedBy(issuer: string, cursor?: string | null): Promise<IssuedPage | null>;
  /**
   * What the index knows at a glance (docs/decisions.md#the-home-page): its counts, its latest
   * `latest` changes of verdict, newest first, and the `issuers` issuers vouching for the most members.
   */
  overview(latest: number, issuers: number): Promise<Overview>;
  /**
   * A page of every recorded change in the order recorded (docs/api.md#changes): oldest first after a
   * position, or newest first before one (./positions.ts).
   */
  changes(where: { after: string | null } | { before: string | null }, limit: number): Promise<ChangePage>;
  /** The position a cursor names in this index; null when it names none (docs/api.md#changes). */
  positionOf(cursor: ChangeCursor): Promise<string | null>;
  /** Whether the database answers now (for /readyz), within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<boolean>;
  /** Results waiting to be recorded until the database answers again (docs/deploying.md#when-a-part-fails). */
  readonly backlog: number;
  /** Results dropped unrecorded since the store opened, past `BACKLOG_MAX` waiting (lib/store/recorder.ts; the oldest each time). */
  readonly dropped: number;
  /** The index's size and its queue, for /metrics. */
  stats(): Promise<StoreStats>;
  /**
   * Records the results waiting now, trying for at most `timeoutMs` (an instance that stops,
   * docs/deploying.md#upgrading-without-losing-results); answers how many still wait. Never throws.
   */
  flush(timeoutMs: number): Promise<number>;
  /**
   * Removes what was never accepted and was last checked over 7 days before `now`
   * (docs/decisions.md#the-index); how many domains left, 0 when the database cannot say. Never throws.
   * The store does it by itself every hour.
   */
  prune(now?: Date): Promise<number>;
  /** The database, for the index's other parts (the queue, the notices). */
  readonly db: Db;
  /** How often a followed entity is re-checked, in seconds (docs/notices.md#looking-by-itself). */
  readonly followS: number;
  /** Calls `wake` after each record written by this instance (the notifier hands its changes out at once); answers how to stop. */
  onRecorded(wake: () => void): () => void;
  close(): Promise<void>;
};

export type StoreStats = {
  entities: number;
  /** Background resolutions due now and not taken. */
  queueDepth: number;
  /** How long the oldest of them has been due, in seconds: how far re-verification is behind. */
  lagS: number;
};

/** How often the store removes what was never accepted (docs/decisions.md#the-index). */
const PRUNE_EVERY_MS = 3600_000;

export { BACKLOG_MAX, RECORDS_AT_ONCE } from "./recorder.ts";

export type StoreOptions = {
  /**
   * Discovery (docs/decisions.md#discovery): the domains each recorded result points to are queued;
   * `queued` is told how many, so a crawler can wake. Null: nothing is discovered.
   */
  discovery?: (DiscoveryOptions & { queued?: (n: number) => void }) | null;
  /** docs/notices.md#looking-by-itself: a followed entity is re-checked within this many seconds. @default 3600 */
  followS?: number;
};

/** How many entities the index holds, and how far re-verification is behind. */
async function storeStats(db: Db): Promise<StoreStats> {
  const [row] = await db.query<{ entities: string; depth: string; lag: number | null }>(
    `SELECT (SELECT count(*) FROM entities) AS entities,
            count(*) AS depth,
            extract(epoch FROM now() - min(due_at))::float8 AS lag
       FROM crawl_queue WHERE due_at <= now() AND (locked_until IS NULL OR locked_until < now())`,
  );
  return { entities: Number(row?.entities ?? 0), queueDepth: Number(row?.depth ?? 0), lagS: Math.max(0, row?.lag ?? 0) };
}

/** What the home page shows of the index (docs/decisions.md#the-home-page). */
async function overviewOf(db: Db, latest: number, issuers: number): Promise<Overview> {
  const [counts, page, top] = await Promise.all([indexCounts(db), changesPage(db, { before: null }, latest), topIssuers(db, issuers)]);
  return { counts, latest: page.changes, issuers: top };
}

/** Migrates the store's schema; a failure in words. */
async function migrated(on: Db): Promise<void> {
  try {
    await migrate(on);
  } catch (err) {
    throw new StoreError(`the store's schema cannot be brought up to date: ${(err as Error).message}`);
  }
}

/** Whether the database answers a query within `timeoutMs`. */
async function answersWithin(db: Db, timeoutMs: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  const answered = db.query("SELECT 1").then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([answered, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens the store, migrating it; throws `StoreError` in words when it cannot. */
export async function openStore(
  where: StoreLocation,
  log: (line: string) => void = console.error,
  options: StoreOptions = {},
): Promise<Store> {
  const discovery = options.discovery ?? null;
  // The embedded engine holds its folder's lock itself (lib/store/pglite-engine.mjs), and is started
  // again, migrated, when it dies (lib/store/db.ts, `openSupervised`).
  const db: Db = await openDb(where, log, migrated);

  // docs/decisions.md#the-index: what was never accepted leaves 7 days after its last check.
  const prune = () => void pruneNeverAccepted(db).catch(() => undefined);
  const pruning = setInterval(prune, PRUNE_EVERY_MS);
  pruning.unref();
  // docs/decisions.md#search-at-size: the embedded engine's statistics kept as autovacuum would.
  const stopCounting = keepStatistics(db);
  const ping = (timeoutMs = 2000) => answersWithin(db, timeoutMs);
  const notices = new Set<() => void>();
  const recorder = createRecorder(
    db,
    log,
    { discovery, followS: options.followS ?? FOLLOW_PERIOD_S, changed: () => notices.forEach((wake) => wake()) },
    () => ping(),
  );

  return {
    engine: db.engine,
    db,
    record: (result, client) => recorder.record(result, client),
    async recordResponse(response, client) {
      // One transaction per result, in order: a property query's owners (up to its fetch budget) queue
      // behind each other rather than holding one long transaction.
      const results: EntityResult[] = [];
      for (const result of response.results) results.push(await recorder.record(result, client));
      return extend(response, { results });
    },
    history: (domain) => history(db, domain.toLowerCase()),
    preview: (domain, fetchedAt) => preview(db, domain.toLowerCase(), new Date(fetchedAt)).catch(() => null),
    async search(text, cursor = null) {
      const offset = decodeCursor(cursor);
      return offset === null ? null : searchIndex(db, text, offset);
    },
    issuedBy: (issuer, cursor) => issuedBy(db, issuer, cursor),
    ping,
    state: () => (recorder.noSpace ? "no space" : (db.state?.() ?? "running")),
    get dropped() {
      return recorder.dropped;
    },
    get backlog() {
      return recorder.waiting;
    },
    stats: () => storeStats(db),
    prune: (now) => pruneNeverAccepted(db, now).catch(() => 0),
    overview: (latest, issuers) => overviewOf(db, latest, issuers),
    changes: (where, limit) => changesPage(db, where, limit),
    positionOf: (cursor) => positionOf(db, cursor),
    flush: (timeoutMs) => recorder.flush(timeoutMs),
    followS: options.followS ?? FOLLOW_PERIOD_S,
    onRecorded(wake) {
      notices.add(wake);
      return () => notices.delete(wake);
    },
    async close() {
      recorder.stop();
      clearInterval(pruning);
      stopCounting();
      await db.close();
    },
  };
}
