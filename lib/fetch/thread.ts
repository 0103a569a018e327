/**
 * The fetcher on a worker thread (lib/fetch/fetch-worker.ts), for the server
 * (docs/architecture.md#fetch-and-memory): TLS handshakes, decompression and the garbage of their
 * buffers stay off the thread that answers pages. A document is one message each way, the fetch
 * asked and its answer (the in-thread fetcher's outcome or refusal, as it is), and nothing between:
 * the thread holds the outbound gate and counts the per-minute budgets its requests spend. This side
 * counts the fetches it asked for (all admission needs), and asks the thread for its counts only
 * when admission or /metrics read them.
 */
import { Worker } from "node:worker_threads";
import { extend } from "../objects.ts";
import type { TrafficSettings } from "../traffic/limits.ts";
import type { Counter, JointDecision, Take, Used } from "../traffic/window.ts";
import { createOutboundCount, type OutboundGate, type OutboundStats, type Priority } from "../traffic/outbound.ts";
import { isRefusal, refusal, type FetchRefusal } from "../traffic/refusal.ts";
import type { ConnectToEntry } from "./connect-to.ts";
import type { SocketStats } from "./fetcher.ts";
import type { Fetcher, FetchMode, FetchOptions, FetchOutcome } from "./outcome.ts";

/**
 * The per-minute budgets the thread's requests spend (docs/architecture.md#traffic): the limits, and
 * the fleet's Redis when there is one, which the thread reaches on a connection of its own under the
 * same keys as every other instance's.
 */
export type ThreadBudgets = { settings: TrafficSettings; fleet: { redisUrl: string; keyPrefix: string } | null };

/** What the thread's fetcher is made with: the in-thread fetcher's options that can cross a thread. */
export type ThreadSettings = {
  timeoutMs: number;
  connectTo: readonly ConnectToEntry[];
  userAgent: string;
  /** Fetches in flight at most (`outbound`), and waiting at most (`outboundQueue`). */
  maxOutbound: number;
  maxQueued: number;
  hostAtOnce: number;
  addressAtOnce: number;
  ca?: readonly string[];
  /** The budgets every request spends, counted on the thread; null: none. */
  budgets: ThreadBudgets | null;
  /** Built by Next, the thread is its compiled chunk; run from source (the tests), TypeScript loaded through tsx. */
  bundled: boolean;
};

/** What this side asks the thread: a fetch, a decision or a count of the budgets' limiters, its counts for /metrics. */
export type ToThread =
  | { op: "fetch"; id: number; url: string; mode: FetchMode; priority: Priority; client: string }
  | { op: "decide"; id: number; takes: Take[]; take: boolean }
  | { op: "used"; id: number; take: Take }
  | { op: "stats"; id: number }
  | { op: "close" };

/** The thread's answers, each to the question of its `id`; and the lines its link to Redis logs. */
export type FromThread =
  | { kind: "done"; id: number; outcome: FetchOutcome | FetchRefusal }
  | { kind: "failed"; id: number; message: string }
  | { kind: "decided"; id: number; decision: JointDecision }
  | { kind: "used"; id: number; used: Used }
  | { kind: "stats"; id: number; gate: OutboundStats; sockets: SocketStats }
  | { kind: "log"; line: string }
  | { kind: "closed" };

/** What the app thread knows of the outbound cap: enough for admission and /metrics. */
export type OutboundView = Pick<OutboundGate, "max" | "retryAfterS" | "full"> & { stats(): OutboundStats | Promise<OutboundStats> };

export type ThreadedFetcher = Fetcher & {
  close(): Promise<void>;
  sockets(): Promise<SocketStats>;
  outbound: OutboundView;
  /** The fetch budgets as the thread counts them: where this side's limiters of them count (`createWindows`' `budgets`). */
  budgets: Counter;
};

export type ThreadOptions = {
  /** Where the lines of the thread's link to Redis go. @default console.error */
  log?: (line: string) => void;
  /** Starts the thread (the tests start one that dies, or count its messages). */
  spawn?: (settings: ThreadSettings) => Worker;
};

/**
 * The thread, one way everywhere: Next compiles `./fetch-worker.ts` named so into a chunk of its own
 * (the server, `next dev`); run from source, the same file is loaded with tsx's loader.
 */
export function startFetchWorker(settings: ThreadSettings): Worker {
  return new Worker(new URL("./fetch-worker.ts", import.meta.url), {
    workerData: settings,
    ...(settings.bundled ? {} : { execArgv: ["--import", "tsx"] }),
  });
}

/** A question's answer, or `lost` when its thread stopped first. */
type Answer = Extract<FromThread, { id: number }> | { kind: "lost"; why: string };

type Counts = { gate: OutboundStats; sockets: SocketStats };

/** What this side keeps of its thread: the questions it waits on, its count of fetches, the thread and its last counts. */
type ThreadState = {
  settings: ThreadSettings;
  spawn: (settings: ThreadSettings) => Worker;
  log: (line: string) => void;
  waiting: Map<number, { worker: Worker; answer: (answer: Answer) => void }>;
  /** The id of the next question. */
  next: number;
  count: ReturnType<typeof createOutboundCount>;
  lastCounts: Counts;
  thread: Worker | null;
  closing: Promise<void> | null;
  /** Until when no thread is started after one died, in ms. */
  restAfterDeath: number;
  /** The question for the counts now asked, shared by every gauge of a scrape. */
  asking: Promise<Counts> | null;
};

/**
 * Starts the fetch thread when first needed. A thread that dies ends the fetches it held as this
 * resolver's fault (`local_fault`, never the publisher's); the next fetch starts a new one, after a
 * second's rest. Its counts go with it: a new thread counts its budgets from nothing (as an
 * instance does whose Redis is away, docs/deploying.md#when-a-part-fails).
 */
export function createThreadedFetcher(settings: ThreadSettings, options: ThreadOptions = {}): ThreadedFetcher {
  const state: ThreadState = {
    settings,
    spawn: options.spawn ?? startFetchWorker,
    log: options.log ?? console.error,
    waiting: new Map(),
    next: 1,
    // Fetches asked and not yet answered, against the thread's own bound: admission sees a full queue
    // at once, and past it a fetch is refused busy without a round trip.
    count: createOutboundCount({ max: settings.maxOutbound, maxQueued: settings.maxQueued, maxWaitMs: settings.timeoutMs }),
    lastCounts: { gate: { active: 0, queued: 0, pending: 0, peakActive: 0, refused: 0 }, sockets: { open: 0, peak: 0 } },
    thread: null,
    closing: null,
    restAfterDeath: 0,
    asking: null,
  };
  const { count } = state;
  const fetchOnThread: Fetcher = (url, mode, fetchOptions = {}) => fetchOn(state, url, mode, fetchOptions);

  return Object.assign(fetchOnThread, {
    outbound: {
      max: count.max,
      retryAfterS: count.retryAfterS,
      full: count.full,
      stats: (): Promise<OutboundStats> => outboundStats(state),
    } satisfies OutboundView,
    sockets: async (): Promise<SocketStats> => (await counts(state)).sockets,
    budgets: threadBudgets(state),
    close: (): Promise<void> => closeThread(state),
  });
}

/** This resolver's own fault (`local_fault`, never the publisher's), to be asked again in 5 s. */
const fault = (message: string) => refusal("local_fault", message, 5);

/** The thread keeps the process alive only while it owes an answer. */
function settle(state: ThreadState) {
  if (state.waiting.size === 0) state.thread?.unref();
  else state.thread?.ref();
}

/** Starts a thread: its answers go to the questions that wait on them, its death ends them as lost. */
function start(state: ThreadState): Worker {
  const { spawn, log } = state;
  const worker = spawn(state.settings);
  worker.on("message", (m: FromThread) => {
    if (m.kind === "log") return log(m.line);
    if (m.kind === "closed") return;
    const asked = state.waiting.get(m.id);
    state.waiting.delete(m.id);
    settle(state);
    asked?.answer(m);
  });
  worker.on("error", (err) => gone(state, worker, err.message));
  worker.on("exit", (code) => gone(state, worker, `exit code ${code}`));
  worker.unref();
  return worker;
}

/** A thread stopped: the questions it held are answered `lost`, and none starts for a second. */
function gone(state: ThreadState, worker: Worker, why: string) {
  if (state.thread === worker) state.thread = null;
  // A thread that cannot start is not started again for every fetch: a second's rest first.
  state.restAfterDeath = Date.now() + 1000;
  for (const [id, asked] of state.waiting) {
    if (asked.worker !== worker) continue;
    state.waiting.delete(id);
    asked.answer({ kind: "lost", why });
  }
  settle(state);
}

/** The thread, started if need be; or why there is none to ask. */
function running(state: ThreadState): Worker | FetchRefusal {
  if (state.closing) return fault("this resolver is closing");
  if (state.thread) return state.thread;
  if (Date.now() < state.restAfterDeath) return fault("this resolver's fetch thread stopped; try again shortly");
  try {
    return (state.thread = start(state));
  } catch (err) {
    return fault(`this resolver could not start its fetch thread: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Asks `worker` one question, under the next id; answered when the thread answers it or stops. */
function ask(state: ThreadState, worker: Worker, question: (id: number) => ToThread): Promise<Answer> {
  return new Promise((answer) => {
    const id = state.next++;
    state.waiting.set(id, { worker, answer });
    settle(state);
    worker.postMessage(question(id));
  });
}

/** One fetch, counted on this side, asked of the thread; a thread that stopped or failed is this resolver's fault. */
async function fetchOn(state: ThreadState, url: string, mode: FetchMode, fetchOptions: FetchOptions): Promise<FetchOutcome | FetchRefusal> {
  const worker = running(state);
  if (isRefusal(worker)) return worker;
  const leave = state.count.enter();
  if (isRefusal(leave)) return leave;
  try {
    const priority = fetchOptions.priority ?? "person";
    const client = fetchOptions.client ?? "local";
    const answer = await ask(state, worker, (id) => ({ op: "fetch", id, url, mode, priority, client }));
    if (answer.kind === "done") return answer.outcome;
    if (answer.kind === "lost") return fault(`this resolver's fetch thread stopped (${answer.why}); try again shortly`);
    return fault(`this resolver could not fetch: ${answer.kind === "failed" ? answer.message : "no answer"}`);
  } finally {
    leave();
  }
}

/** The budgets as the thread counts them. Without a thread to ask, nothing is counted: the limits fail open, as to a Redis that is away. */
function threadBudgets(state: ThreadState): Counter {
  return {
    async decide(takes, take) {
      const worker = running(state);
      if (isRefusal(worker)) return { ok: true };
      const answer = await ask(state, worker, (id) => ({ op: "decide", id, takes: [...takes], take }));
      return answer.kind === "decided" ? answer.decision : { ok: true };
    },
    async used(take) {
      const worker = running(state);
      if (isRefusal(worker)) return { used: 0, oldestLeavesMs: 0 };
      const answer = await ask(state, worker, (id) => ({ op: "used", id, take }));
      return answer.kind === "used" ? answer.used : { used: 0, oldestLeavesMs: 0 };
    },
  };
}

/**
 * The thread's counts. One question for every gauge of a scrape; a thread that does not answer within a
 * second is reported as last heard, and no thread starts for it.
 */
function counts(state: ThreadState): Promise<Counts> {
  const worker = state.thread;
  if (!worker) {
    const { lastCounts } = state;
    return Promise.resolve({ gate: extend(lastCounts.gate, { active: 0, queued: 0 }), sockets: extend(lastCounts.sockets, { open: 0 }) });
  }
  state.asking ??= Promise.race([
    ask(state, worker, (id) => ({ op: "stats", id })).then((answer) =>
      answer.kind === "stats" ? (state.lastCounts = { gate: answer.gate, sockets: answer.sockets }) : state.lastCounts,
    ),
    new Promise<Counts>((resolve) => setTimeout(() => resolve(state.lastCounts), 1000).unref()),
  ]).finally(() => (state.asking = null));
  return state.asking;
}

/** The outbound gate's counts: the thread's, with this side's pending and refused fetches. */
async function outboundStats(state: ThreadState): Promise<OutboundStats> {
  const { gate } = await counts(state);
  return extend(gate, { pending: state.count.pending(), refused: gate.refused + state.count.refused() });
}

/** Closes the thread once: asks it to close, waits up to 2 s for it, then ends it. */
function closeThread(state: ThreadState): Promise<void> {
  state.closing ??= (async () => {
    const worker = state.thread;
    if (!worker) return;
    const closed = new Promise<void>((resolve) => {
      worker.on("message", (m: FromThread) => m.kind === "closed" && resolve());
      worker.once("exit", () => resolve());
    });
    worker.postMessage({ op: "close" } satisfies ToThread);
    await Promise.race([closed, new Promise((r) => setTimeout(r, 2000).unref())]);
    await worker.terminate();
  })();
  return state.closing;
}
