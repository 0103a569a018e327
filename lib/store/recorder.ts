/**
 * Recording results (docs/decisions.md#the-index), and keeping them while the database cannot take
 * them (docs/deploying.md#when-a-part-fails): while the database is away or its disk is full, results
 * wait here (bounded, the oldest dropped and counted past {@link BACKLOG_MAX}) and are recorded in
 * order once it takes them again. Results are recorded a few at once, in a fair queue
 * ({@link RECORDS_AT_ONCE}); each new result points discovery at the domains it names.
 */
import type { EntityResult } from "../result/record.ts";
import { createAtOnceLimiter } from "../traffic/at-once.ts";
import { isDiskFull, type Db } from "./db.ts";
import { discoveredDomains, enqueue, type DiscoveryOptions } from "./queue.ts";
import { record } from "./verdicts.ts";

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

export type Discovery = (DiscoveryOptions & { queued?: (n: number) => void }) | null;

/** What the recorder is told of what follows a record: discovery, how often followed entities are checked, who to wake. */
export type RecorderOptions = {
  discovery: Discovery;
  /** docs/notices.md#looking-by-itself: `IDENT_FOLLOW_RECHECK_S`. */
  followS: number;
  /** Told after a record that wrote changes of verdict (the notifier hands them out now, not at its next poll). */
  changed?: () => void;
};

export type Recorder = {
  /** Records one result (or keeps it for later); the result as recorded. */
  record(result: EntityResult, client?: string): Promise<EntityResult>;
  /** Waits up to `timeoutMs` for the waiting results to be recorded; how many still wait. */
  flush(timeoutMs: number): Promise<number>;
  /** Results waiting, those being written included. */
  readonly waiting: number;
  /** Results dropped unrecorded since the store opened. */
  readonly dropped: number;
  /** Whether the last write was refused for want of space. */
  readonly noSpace: boolean;
  /** Stops asking whether the database is back. */
  stop(): void;
};

/** What the recorder keeps between results. */
type State = {
  db: Db;
  log: (line: string) => void;
  discovery: Discovery;
  followS: number;
  changed: () => void;
  ping: () => Promise<boolean>;
  turns: ReturnType<typeof createAtOnceLimiter>;
  backlog: EntityResult[];
  /** Dropped in this outage, and since the store opened. */
  dropped: number;
  droppedEver: number;
  /** Set by a write refused for want of space; cleared by the next write that succeeds. */
  noSpace: boolean;
  /** Taken from the backlog and not yet written: still waiting, as far as anyone asking can tell. */
  draining: number;
  retry: ReturnType<typeof setTimeout> | undefined;
};

type Attempt = { kind: "written"; out: { result: EntityResult; written: boolean } } | { kind: "wait"; why: string } | { kind: "failed" };

export function createRecorder(db: Db, log: (line: string) => void, options: RecorderOptions, ping: () => Promise<boolean>): Recorder {
  const s: State = {
    db,
    log,
    discovery: options.discovery,
    followS: options.followS,
    changed: options.changed ?? (() => undefined),
    ping,
    turns: createAtOnceLimiter(RECORDS_AT_ONCE[db.engine]),
    backlog: [],
    dropped: 0,
    droppedEver: 0,
    noSpace: false,
    draining: 0,
    retry: undefined,
  };
  return {
    record: (result, client = "") => recordOne(s, result, client),
    flush: (timeoutMs) => flush(s, timeoutMs),
    get waiting() {
      return s.backlog.length + s.draining;
    },
    get dropped() {
      return s.droppedEver;
    },
    get noSpace() {
      return s.noSpace;
    },
    stop: () => clearTimeout(s.retry),
  };
}

/** Asks again, in a while, whether the database takes the waiting results. */
function later(s: State) {
  s.retry ??= setTimeout(() => void drain(s), BACKLOG_RETRY_MS);
  s.retry.unref();
}

function keepForLater(s: State, result: EntityResult, why: string) {
  if (s.backlog.length === 0 && s.draining === 0) {
    s.log(
      s.noSpace
        ? `store: the disk is full (${why}); results wait to be recorded until there is space`
        : `store: the database does not answer (${why}); results wait to be recorded until it does`,
    );
  }
  s.backlog.push(result);
  if (s.backlog.length > BACKLOG_MAX) {
    const oldest = s.backlog.shift();
    s.dropped++;
    s.droppedEver++;
    // The first of an outage, then at each power of ten: the log says what was lost without a line each.
    if (oldest && Number.isInteger(Math.log10(s.dropped))) {
      s.log(
        `store: more than ${BACKLOG_MAX} results wait; ${s.dropped} dropped so far, the latest the check of ${oldest.entity.domain} at ${oldest.cache.fetched_at}`,
      );
    }
  }
  later(s);
}

/** Records the waiting results in order, the first alone until one is written; stops at the first that must wait again. */
async function drain(s: State) {
  s.retry = undefined;
  if (!(await s.ping())) return later(s);
  let recorded = 0;
  while (s.backlog.length > 0) {
    const result = s.backlog.shift() as EntityResult;
    s.draining++;
    let outcome: Attempt;
    try {
      outcome = await attempt(s, result);
    } finally {
      s.draining--;
    }
    if (outcome.kind === "wait") {
      s.backlog.unshift(result);
      return later(s);
    }
    if (outcome.kind === "written") await written(s, result, outcome.out);
    recorded++;
  }
  s.log(
    `store: results are recorded again; ${recorded} waiting results recorded${s.dropped ? ` (${s.dropped} older ones were dropped)` : ""}`,
  );
  s.dropped = 0;
}

/** One try at recording `result`: written, to wait (the database away, or its disk full), or refused for itself (logged). */
async function attempt(s: State, result: EntityResult): Promise<Attempt> {
  try {
    const out = await s.db.transaction((tx) => record(tx, result, s.followS));
    s.noSpace = false;
    return { kind: "written", out };
  } catch (err) {
    const message = (err as Error).message;
    // docs/deploying.md#when-a-part-fails: a full disk is a wait, never a loss.
    if (isDiskFull(err)) {
      // PGlite fails every statement after a write refused for space: a new engine is started (its
      // supervisor waits longer each time while the disk stays full).
      s.db.restart?.();
      s.noSpace = true;
      return { kind: "wait", why: message };
    }
    // The database gone (rather than refusing this result): kept until it is back.
    if (!(await s.ping())) return { kind: "wait", why: message };
    s.log(`store: the resolution of ${result.entity.domain} was not recorded: ${message}`);
    return { kind: "failed" };
  }
}

async function recordOne(s: State, result: EntityResult, client: string): Promise<EntityResult> {
  // Behind results already waiting: they are recorded first, in order.
  if (s.backlog.length > 0 || s.draining > 0) {
    keepForLater(s, result, "results are waiting");
    return result;
  }
  const tried = await s.turns(ENGINE_TURN, () => attempt(s, result), undefined, client);
  if (tried.kind === "wait") keepForLater(s, result, tried.why);
  return tried.kind === "written" ? written(s, result, tried.out) : result;
}

/** After a result is written: the domains it points to queued (discovery); the result as recorded. */
async function written(s: State, result: EntityResult, out: { result: EntityResult; written: boolean }): Promise<EntityResult> {
  const { discovery } = s;
  if (out.written) s.changed();
  // A new check only: an answer from the cache found nothing its check did not (docs/decisions.md#discovery).
  const found = discovery && out.written ? discoveredDomains(result) : [];
  if (discovery && found.length > 0) {
    // Its own transaction: a discovery that fails never undoes the record.
    try {
      const n = await s.db.transaction((tx) => enqueue(tx, found, "discovered", discovery));
      if (n > 0) discovery.queued?.(n);
    } catch (err) {
      s.log(`store: the domains ${result.entity.domain} points to were not queued: ${(err as Error).message}`);
    }
  }
  return out.result;
}

/** Waits up to `timeoutMs` for the waiting results to be recorded; how many still wait. */
async function flush(s: State, timeoutMs: number): Promise<number> {
  const until = Date.now() + timeoutMs;
  while (s.backlog.length + s.draining > 0 && Date.now() < until) {
    if (s.draining === 0) {
      clearTimeout(s.retry);
      await drain(s).catch(() => undefined);
    }
    if (s.backlog.length + s.draining > 0) await new Promise((r) => setTimeout(r, Math.min(200, Math.max(0, until - Date.now()))));
  }
  return s.backlog.length + s.draining;
}
