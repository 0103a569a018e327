/**
 * The fetcher on a worker thread (lib/fetch/fetch-worker.ts), for the server (docs/decisions.md#memory):
 * TLS handshakes, decompression and the garbage of their buffers stay off the thread that answers
 * pages, which sees one message per document. The answers are the in-thread fetcher's: outcomes and
 * refusals as they are.
 */
import { Worker } from "node:worker_threads";
import { extend } from "../objects";
import type { FetchBudgets, FetchTarget } from "../traffic";
import { createOutboundGate, type OutboundGate, type OutboundStats, type Priority } from "../traffic/outbound";
import { isRefusal, refusal, type FetchRefusal } from "../traffic/refusal";
import type { ConnectToEntry } from "./connect-to";
import type { Fetcher, FetchMode, FetchOutcome, SocketStats } from "./fetcher";

/** Starts the thread's TypeScript source with tsx's loader. */
export const FROM_SOURCE = `
  const { workerData } = require("node:worker_threads");
  import("tsx/esm/api").then(({ register }) => { register(); return import(workerData.file); });`;

/** How much lower than the process the fetch thread runs (a nice value, docs/decisions.md#memory). */
export const THREAD_NICENESS = 10;

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
  /** With it, every request spends the app thread's budgets (which a fleet counts in Redis). */
  budgets: boolean;
  /** Bundled by Next, the thread is JavaScript; run from source (the tests), TypeScript loaded through tsx. */
  bundled: boolean;
};

export type ToThread =
  | { op: "fetch"; id: number; url: string; mode: FetchMode; priority: Priority; client: string }
  | { op: "spent"; id: number; refused: FetchRefusal | null }
  | { op: "close" };

export type FromThread =
  | { kind: "done"; id: number; outcome: FetchOutcome | FetchRefusal }
  | { kind: "failed"; id: number; message: string }
  | { kind: "spend"; id: number; target: FetchTarget }
  | { kind: "stats"; gate: OutboundStats; sockets: SocketStats }
  | { kind: "closed" };

/** What the app thread knows of the outbound cap: enough for admission and /metrics. */
export type OutboundView = Pick<OutboundGate, "max" | "retryAfterS" | "full" | "stats">;

export type ThreadedFetcher = Fetcher & { close(): Promise<void>; sockets(): SocketStats; outbound: OutboundView };

/** The thread, started from Next's bundle or from source. */
function startWorker(settings: ThreadSettings): Worker {
  return settings.bundled
    ? new Worker(new URL("./fetch-worker.ts", import.meta.url), { workerData: settings })
    : new Worker(FROM_SOURCE, { eval: true, workerData: extend(settings, { file: new URL("./fetch-worker.ts", import.meta.url).href }) });
}

/**
 * Starts the fetch thread (`spawn` is for the tests, to start one that dies). A thread that dies
 * ends the fetches it held as this resolver's fault (`local_fault`, never the publisher's); the
 * next fetch starts a new one, after a second's rest.
 */
export function createThreadedFetcher(
  settings: ThreadSettings,
  budgets?: FetchBudgets,
  spawn: (settings: ThreadSettings) => Worker = startWorker,
): ThreadedFetcher {
  const pending = new Map<number, (answer: FetchOutcome | FetchRefusal) => void>();
  let next = 1;
  let latest: { gate: OutboundStats; sockets: SocketStats } = {
    gate: { active: 0, queued: 0, pending: 0, peakActive: 0, refused: 0 },
    sockets: { open: 0, peak: 0 },
  };
  // The same cap as the thread's, used here only to count fetches in from the moment they are asked
  // for: admission sees a full queue at once, and past it a fetch is refused busy without a round trip.
  const entry = createOutboundGate({ max: settings.maxOutbound, maxQueued: settings.maxQueued, maxWaitMs: settings.timeoutMs });
  let thread: Worker | null = null;
  let closing: Promise<void> | null = null;
  let restAfterDeath = 0;

  const fault = (message: string) => refusal("local_fault", message, 5);
  const settle = () => {
    // The thread keeps the process alive only while it holds fetches.
    if (pending.size === 0) thread?.unref();
    else thread?.ref();
  };

  function start(): Worker {
    const worker = spawn(settings);
    worker.on("message", (m: FromThread) => {
      if (m.kind === "stats") latest = { gate: m.gate, sockets: m.sockets };
      else if (m.kind === "spend") {
        // The limiters fall back to their own count rather than throw; were one to, the fetch goes on rather than hang.
        void (budgets ? budgets(m.target) : Promise.resolve(null))
          .catch(() => null)
          .then((refused) => worker.postMessage({ op: "spent", id: m.id, refused } satisfies ToThread));
      } else if (m.kind === "done" || m.kind === "failed") {
        const answer = pending.get(m.id);
        pending.delete(m.id);
        settle();
        answer?.(m.kind === "done" ? m.outcome : fault(`this resolver could not fetch: ${m.message}`));
      }
    });
    const gone = (why: string) => {
      if (thread === worker) thread = null;
      // A thread that cannot start is not started again for every fetch: a second's rest first.
      restAfterDeath = Date.now() + 1000;
      for (const answer of pending.values()) answer(fault(`this resolver's fetch thread stopped (${why}); try again shortly`));
      pending.clear();
    };
    worker.on("error", (err) => gone(err.message));
    worker.on("exit", (code) => gone(`exit code ${code}`));
    worker.unref();
    return worker;
  }

  const fetchOnThread: Fetcher = async (url, mode, options = {}) => {
    if (closing) return fault("this resolver is closing");
    if (!thread && Date.now() < restAfterDeath) return fault("this resolver's fetch thread stopped; try again shortly");
    const ticket = entry.enter();
    if (isRefusal(ticket)) return ticket;
    ticket.started(); // its wait for a slot is the thread's to time
    let worker: Worker;
    try {
      worker = thread ??= start();
    } catch (err) {
      // A thread that cannot start (no memory, no threads left) gives back its slot and says so.
      ticket.leave();
      return fault(`this resolver could not start its fetch thread: ${err instanceof Error ? err.message : String(err)}`);
    }
    const id = next++;
    try {
      return await new Promise<FetchOutcome | FetchRefusal>((resolve) => {
        pending.set(id, resolve);
        settle();
        const message: ToThread = { op: "fetch", id, url, mode, priority: options.priority ?? "person", client: options.client ?? "local" };
        worker.postMessage(message);
      });
    } finally {
      ticket.leave();
    }
  };

  return Object.assign(fetchOnThread, {
    outbound: {
      max: entry.max,
      retryAfterS: entry.retryAfterS,
      full: entry.full,
      stats: () => extend(latest.gate, { pending: entry.stats().pending }),
    } satisfies OutboundView,
    sockets: (): SocketStats => ({ ...latest.sockets }),
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
