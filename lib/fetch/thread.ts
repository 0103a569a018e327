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
import { extend } from "../objects";
import type { Counter, JointDecision, Take, TrafficSettings, Used } from "../traffic";
import { createOutboundCount, type OutboundGate, type OutboundStats, type Priority } from "../traffic/outbound";
import { isRefusal, refusal, type FetchRefusal } from "../traffic/refusal";
import type { ConnectToEntry } from "./connect-to";
import type { Fetcher, FetchMode, FetchOutcome, SocketStats } from "./fetcher";

/** How much lower than the process the fetch thread runs (a nice value, docs/decisions.md#memory). */
export const THREAD_NICENESS = 10;

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

/**
 * Starts the fetch thread when first needed. A thread that dies ends the fetches it held as this
 * resolver's fault (`local_fault`, never the publisher's); the next fetch starts a new one, after a
 * second's rest. Its counts go with it: a new thread counts its budgets from nothing (as an
 * instance does whose Redis is away, docs/deploying.md#when-a-part-fails).
 */
export function createThreadedFetcher(settings: ThreadSettings, options: ThreadOptions = {}): ThreadedFetcher {
  const spawn = options.spawn ?? startFetchWorker;
  const log = options.log ?? console.error;
  const waiting = new Map<number, { worker: Worker; answer: (answer: Answer) => void }>();
  let next = 1;
  // Fetches asked and not yet answered, against the thread's own bound: admission sees a full queue
  // at once, and past it a fetch is refused busy without a round trip.
  const count = createOutboundCount({ max: settings.maxOutbound, maxQueued: settings.maxQueued, maxWaitMs: settings.timeoutMs });
  let lastCounts: Counts = { gate: { active: 0, queued: 0, pending: 0, peakActive: 0, refused: 0 }, sockets: { open: 0, peak: 0 } };
  let thread: Worker | null = null;
  let closing: Promise<void> | null = null;
  let restAfterDeath = 0;

  const fault = (message: string) => refusal("local_fault", message, 5);
  const settle = () => {
    // The thread keeps the process alive only while it owes an answer.
    if (waiting.size === 0) thread?.unref();
    else thread?.ref();
  };

  function start(): Worker {
    const worker = spawn(settings);
    worker.on("message", (m: FromThread) => {
      if (m.kind === "log") return log(m.line);
      if (m.kind === "closed") return;
      const asked = waiting.get(m.id);
      waiting.delete(m.id);
      settle();
      asked?.answer(m);
    });
    const gone = (why: string) => {
      if (thread === worker) thread = null;
      // A thread that cannot start is not started again for every fetch: a second's rest first.
      restAfterDeath = Date.now() + 1000;
      for (const [id, asked] of waiting) {
        if (asked.worker !== worker) continue;
        waiting.delete(id);
        asked.answer({ kind: "lost", why });
      }
      settle();
    };
    worker.on("error", (err) => gone(err.message));
    worker.on("exit", (code) => gone(`exit code ${code}`));
    worker.unref();
    return worker;
  }

  /** The thread, started if need be; or why there is none to ask. */
  function running(): Worker | FetchRefusal {
    if (closing) return fault("this resolver is closing");
    if (thread) return thread;
    if (Date.now() < restAfterDeath) return fault("this resolver's fetch thread stopped; try again shortly");
    try {
      return (thread = start());
    } catch (err) {
      return fault(`this resolver could not start its fetch thread: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  function ask(worker: Worker, question: (id: number) => ToThread): Promise<Answer> {
    return new Promise((answer) => {
      const id = next++;
      waiting.set(id, { worker, answer });
      settle();
      worker.postMessage(question(id));
    });
  }

  const fetchOnThread: Fetcher = async (url, mode, fetchOptions = {}) => {
    const worker = running();
    if (isRefusal(worker)) return worker;
    const leave = count.enter();
    if (isRefusal(leave)) return leave;
    try {
      const priority = fetchOptions.priority ?? "person";
      const client = fetchOptions.client ?? "local";
      const answer = await ask(worker, (id) => ({ op: "fetch", id, url, mode, priority, client }));
      if (answer.kind === "done") return answer.outcome;
      if (answer.kind === "lost") return fault(`this resolver's fetch thread stopped (${answer.why}); try again shortly`);
      return fault(`this resolver could not fetch: ${answer.kind === "failed" ? answer.message : "no answer"}`);
    } finally {
      leave();
    }
  };

  // Without a thread to ask, nothing is counted: the limits fail open, as to a Redis that is away.
  const budgets: Counter = {
    async decide(takes, take) {
      const worker = running();
      if (isRefusal(worker)) return { ok: true };
      const answer = await ask(worker, (id) => ({ op: "decide", id, takes: [...takes], take }));
      return answer.kind === "decided" ? answer.decision : { ok: true };
    },
    async used(take) {
      const worker = running();
      if (isRefusal(worker)) return { used: 0, oldestLeavesMs: 0 };
      const answer = await ask(worker, (id) => ({ op: "used", id, take }));
      return answer.kind === "used" ? answer.used : { used: 0, oldestLeavesMs: 0 };
    },
  };

  // One question for every gauge of a scrape; a thread that does not answer within a second is
  // reported as last heard, and no thread starts for it.
  let asking: Promise<Counts> | null = null;
  const counts = (): Promise<Counts> => {
    const worker = thread;
    if (!worker)
      return Promise.resolve({ gate: extend(lastCounts.gate, { active: 0, queued: 0 }), sockets: extend(lastCounts.sockets, { open: 0 }) });
    asking ??= Promise.race([
      ask(worker, (id) => ({ op: "stats", id })).then((answer) =>
        answer.kind === "stats" ? (lastCounts = { gate: answer.gate, sockets: answer.sockets }) : lastCounts,
      ),
      new Promise<Counts>((resolve) => setTimeout(() => resolve(lastCounts), 1000).unref()),
    ]).finally(() => (asking = null));
    return asking;
  };

  return Object.assign(fetchOnThread, {
    outbound: {
      max: count.max,
      retryAfterS: count.retryAfterS,
      full: count.full,
      stats: async (): Promise<OutboundStats> => {
        const { gate } = await counts();
        return extend(gate, { pending: count.pending(), refused: gate.refused + count.refused() });
      },
    } satisfies OutboundView,
    sockets: async (): Promise<SocketStats> => (await counts()).sockets,
    budgets,
    close(): Promise<void> {
      closing ??= (async () => {
        const worker = thread;
        if (!worker) return;
        const closed = new Promise<void>((resolve) => {
          worker.on("message", (m: FromThread) => m.kind === "closed" && resolve());
          worker.once("exit", () => resolve());
        });
        worker.postMessage({ op: "close" } satisfies ToThread);
        await Promise.race([closed, new Promise((r) => setTimeout(r, 2000).unref())]);
        await worker.terminate();
      })();
      return closing;
    },
  });
}
