/**
 * The index (docs/decisions.md#the-index): opened once at start (the engine, which holds the lock; the
 * migrations), then used by whatever resolves. A store that fails later never fails a lookup: the
 * result is answered as it is and the failure is logged.
 */
import type { Claim, EntityResult, SearchResponse } from "../result/record";
import { isDiskFull, openDb, StoreError, type Db, type EngineState, type StoreLocation } from "./db";
import { migrate } from "./migrations";
import { history, preview, record, type ClaimKind, type History } from "./verdicts";
import { discoveredDomains, enqueue, pruneNeverAccepted, type DiscoveryOptions } from "./queue";
import { decodeCursor, issuedBy, searchIndex, type IndexSearch, type IssuedCredential } from "./search";
import { extend } from "../objects";
import { createAtOnceLimiter } from "../traffic/at-once";
import type { FeedChange } from "./feeds";
import {
  changesPage,
  indexCounts,
  positionOf,
  topIssuers,
  type ChangeCursor,
  type ChangePage,
  type IndexCounts,
  type TopIssuer,
} from "./overview";

/** What the home page shows of the index. */
export type Overview = { counts: IndexCounts; latest: FeedChange[]; issuers: TopIssuer[] };

export { StoreError } from "./db";
export type { StoreLocation } from "./db";

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
  /** The credentials the index knows `issuer` issues, with their holders. */
  issuedBy(issuer: string): Promise<IssuedCredential[]>;
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
  /** Results dropped unrecorded since the store opened, past {@link BACKLOG_MAX} waiting (the oldest each time). */
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
  /** The database, for the index's other parts (the queue). */
  readonly db: Db;
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

/**
 * Results recorded at once (docs/architecture.md#fair-queues): one on the embedded engine, which runs
 * one transaction at a time, a few on a server (its pool holds 8 connections, for reads too). The
 * rest wait in a fair queue, the result of the client with the fewest waiting first, so that a
 * crowd's lookups do not hold another client's answer behind theirs in the engine's own line.
 */
export const RECORDS_AT_ONCE = { pglite: 1, postgres: 4 } as const;
/** The one key of the records' turns. */
const ENGINE_TURN = "engine";

/** Results kept while the database is away; past it the oldest is dropped, and counted. */
export const BACKLOG_MAX = 1000;
/** How often a store with a backlog asks whether the database is back. */
const BACKLOG_RETRY_MS = 2000;

export type StoreOptions = {
  /**
   * Discovery (docs/decisions.md#discovery): the domains each recorded result points to are queued;
   * `queued` is told how many, so a crawler can wake. Null: nothing is discovered.
   */
  discovery?: (DiscoveryOptions & { queued?: (n: number) => void }) | null;
};

/** Opens the store, migrating it; throws `StoreError` in words when it cannot. */
export async function openStore(
  where: StoreLocation,
  log: (line: string) => void = console.error,
  options: StoreOptions = {},
): Promise<Store> {
  const discovery = options.discovery ?? null;
  // The embedded engine holds its folder's lock itself (lib/store/pglite-engine.mjs), and is started
  // again, migrated, when it dies (lib/store/db.ts, `openSupervised`).
  const migrated = async (on: Db) => {
    try {
      await migrate(on);
    } catch (err) {
      throw new StoreError(`the store's schema cannot be brought up to date: ${(err as Error).message}`);
    }
  };
  const db: Db = await openDb(where, log, migrated);
  const recordTurns = createAtOnceLimiter(RECORDS_AT_ONCE[db.engine]);

  // docs/decisions.md#the-index: what was never accepted leaves 7 days after its last check.
  const prune = () => void pruneNeverAccepted(db).catch(() => undefined);
  const pruning = setInterval(prune, PRUNE_EVERY_MS);
  pruning.unref();

  const ping = async (timeoutMs = 2000) => {
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
  };

  // docs/deploying.md#when-a-part-fails: while the database is away or its disk is full, results
  // wait here (bounded), and are recorded in order once it takes them again.
  const backlog: EntityResult[] = [];
  let dropped = 0;
  let droppedEver = 0;
  // Set by a write refused for want of space; cleared by the next write that succeeds.
  let noSpace = false;
  // Taken from the backlog and not yet written: still waiting, as far as anyone asking can tell.
  let draining = 0;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const later = () => {
    retry ??= setTimeout(() => void drain(), BACKLOG_RETRY_MS);
    retry.unref();
  };
  function keepForLater(result: EntityResult, why: string) {
    if (backlog.length === 0 && draining === 0) {
      log(
        noSpace
          ? `store: the disk is full (${why}); results wait to be recorded until there is space`
          : `store: the database does not answer (${why}); results wait to be recorded until it does`,
      );
    }
    backlog.push(result);
    if (backlog.length > BACKLOG_MAX) {
      const oldest = backlog.shift();
      dropped++;
      droppedEver++;
      // The first of an outage, then at each power of ten: the log says what was lost without a line each.
      if (oldest && Number.isInteger(Math.log10(dropped))) {
        log(
          `store: more than ${BACKLOG_MAX} results wait; ${dropped} dropped so far, the latest the check of ${oldest.entity.domain} at ${oldest.cache.fetched_at}`,
        );
      }
    }
    later();
  }
  /** Records the waiting results in order, the first alone until one is written; stops at the first that must wait again. */
  async function drain() {
    retry = undefined;
    if (!(await ping())) return later();
    let recorded = 0;
    while (backlog.length > 0) {
      const result = backlog.shift() as EntityResult;
      draining++;
      let outcome: Attempt;
      try {
        outcome = await attempt(result);
      } finally {
        draining--;
      }
      if (outcome.kind === "wait") {
        backlog.unshift(result);
        return later();
      }
      if (outcome.kind === "written") await written(result, outcome.out);
      recorded++;
    }
    log(`store: results are recorded again; ${recorded} waiting results recorded${dropped ? ` (${dropped} older ones were dropped)` : ""}`);
    dropped = 0;
  }

  type Attempt = { kind: "written"; out: { result: EntityResult; written: boolean } } | { kind: "wait"; why: string } | { kind: "failed" };
  /** One try at recording `result`: written, to wait (the database away, or its disk full), or refused for itself (logged). */
  async function attempt(result: EntityResult): Promise<Attempt> {
    try {
      const out = await db.transaction((tx) => record(tx, result));
      noSpace = false;
      return { kind: "written", out };
    } catch (err) {
      const message = (err as Error).message;
      // docs/deploying.md#when-a-part-fails: a full disk is a wait, never a loss.
      if (isDiskFull(err)) {
        // PGlite fails every statement after a write refused for space: a new engine is started (its
        // supervisor waits longer each time while the disk stays full).
        db.restart?.();
        noSpace = true;
        return { kind: "wait", why: message };
      }
      // The database gone (rather than refusing this result): kept until it is back.
      if (!(await ping())) return { kind: "wait", why: message };
      log(`store: the resolution of ${result.entity.domain} was not recorded: ${message}`);
      return { kind: "failed" };
    }
  }

  async function recordOne(result: EntityResult, client = ""): Promise<EntityResult> {
    // Behind results already waiting: they are recorded first, in order.
    if (backlog.length > 0 || draining > 0) {
      keepForLater(result, "results are waiting");
      return result;
    }
    const tried = await recordTurns(ENGINE_TURN, () => attempt(result), undefined, client);
    if (tried.kind === "wait") keepForLater(result, tried.why);
    return tried.kind === "written" ? written(result, tried.out) : result;
  }

  /** After a result is written: the domains it points to queued (discovery); the result as recorded. */
  async function written(result: EntityResult, out: { result: EntityResult; written: boolean }): Promise<EntityResult> {
    // A new check only: an answer from the cache found nothing its check did not (docs/decisions.md#discovery).
    const found = discovery && out.written ? discoveredDomains(result) : [];
    if (discovery && found.length > 0) {
      // Its own transaction: a discovery that fails never undoes the record.
      try {
        const n = await db.transaction((tx) => enqueue(tx, found, "discovered", discovery));
        if (n > 0) discovery.queued?.(n);
      } catch (err) {
        log(`store: the domains ${result.entity.domain} points to were not queued: ${(err as Error).message}`);
      }
    }
    return out.result;
  }

  return {
    engine: db.engine,
    db,
    record: recordOne,
    async recordResponse(response, client) {
      // One transaction per result, in order: a property query's owners (up to its fetch budget) queue
      // behind each other rather than holding one long transaction.
      const results: EntityResult[] = [];
      for (const result of response.results) results.push(await recordOne(result, client));
      return extend(response, { results });
    },
    history: (domain) => history(db, domain.toLowerCase()),
    preview: (domain, fetchedAt) => preview(db, domain.toLowerCase(), new Date(fetchedAt)).catch(() => null),
    async search(text, cursor = null) {
      const offset = decodeCursor(cursor);
      return offset === null ? null : searchIndex(db, text, offset);
    },
    issuedBy: (issuer) => issuedBy(db, issuer),
    ping,
    state: () => (noSpace ? "no space" : (db.state?.() ?? "running")),
    get dropped() {
      return droppedEver;
    },
    get backlog() {
      return backlog.length + draining;
    },
    async stats() {
      const [row] = await db.query<{ entities: string; depth: string; lag: number | null }>(
        `SELECT (SELECT count(*) FROM entities) AS entities,
                count(*) AS depth,
                extract(epoch FROM now() - min(due_at))::float8 AS lag
           FROM crawl_queue WHERE due_at <= now() AND (locked_until IS NULL OR locked_until < now())`,
      );
      return { entities: Number(row?.entities ?? 0), queueDepth: Number(row?.depth ?? 0), lagS: Math.max(0, row?.lag ?? 0) };
    },
    prune: (now) => pruneNeverAccepted(db, now).catch(() => 0),
    async overview(latest, issuers) {
      const [counts, page, top] = await Promise.all([indexCounts(db), changesPage(db, { before: null }, latest), topIssuers(db, issuers)]);
      return { counts, latest: page.changes, issuers: top };
    },
    changes: (where, limit) => changesPage(db, where, limit),
    positionOf: (cursor) => positionOf(db, cursor),
    async flush(timeoutMs) {
      const until = Date.now() + timeoutMs;
      while (backlog.length + draining > 0 && Date.now() < until) {
        if (draining === 0) {
          clearTimeout(retry);
          await drain().catch(() => undefined);
        }
        if (backlog.length + draining > 0) await new Promise((r) => setTimeout(r, Math.min(200, Math.max(0, until - Date.now()))));
      }
      return backlog.length + draining;
    },
    async close() {
      clearTimeout(retry);
      clearInterval(pruning);
      await db.close();
    },
  };
}
