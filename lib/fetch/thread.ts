/**
 * The fetcher on a worker thread (lib/fetch/fetch-worker.ts), for the server (docs/decisions.md#memory).
 * Under a hundred gzip bombs or a 300-fetch query, the TLS handshakes, the decompression and the
 * garbage of their buffers held the thread that answers pages for tens of milliseconds at a time;
 * on a thread of their own, that thread sees one message per document. The answers are the
 * in-thread fetcher's: outcomes as they are, refusals as {@link NotFetched}.
 */
import { Worker } from "node:worker_threads";
import type { RateDecision, RateLimiter } from "../rate-limit";
import type { ConnectToEntry } from "./connect-to";
import type { Fetcher, FetchMode, FetchOutcome, SocketStats } from "./fetcher";
import { createOutboundGate, type OutboundGate, type OutboundStats, type Priority, type Ticket } from "./outbound";
import { NotFetched, type RefusalKind } from "./refusal";
import { extend } from "../objects";

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
  maxOutbound: number;
  ca?: readonly string[];
  /** With it, every request asks the app thread's host budget (which a fleet counts in Redis). */
  hostBudgetPerMin?: number;
};

export type ToThread =
  | { op: "fetch"; id: number; url: string; mode: FetchMode; priority: Priority }
  | { op: "budget"; id: number; decision: RateDecision }
  | { op: "close" };

export type FromThread =
  | { kind: "done"; id: number; outcome: FetchOutcome }
  | { kind: "refused"; id: number; refusal: { kind: RefusalKind; message: string; retryAfterS: number } }
  | { kind: "failed"; id: number; message: string }
  | { kind: "budget"; id: number; op: "take" | "check"; host: string }
  | { kind: "stats"; gate: OutboundStats; sockets: SocketStats }
  | { kind: "closed" };

/** What the app thread knows of the outbound cap: enough for admission and /metrics. */
export type OutboundView = Pick<OutboundGate, "max" | "retryAfterS" | "full" | "stats">;

export type ThreadedFetcher = Fetcher & { close(): Promise<void>; sockets(): SocketStats; outbound: OutboundView };

/** The thread, started from Next's bundle or from source. */
function startWorker(settings: ThreadSettings): Worker {
  // Bundled by Next (which sets NEXT_RUNTIME), the thread is JavaScript; run from source (the tests), it is
  // TypeScript, loaded through tsx.
  return process.env.NEXT_RUNTIME
    ? new Worker(new URL("./fetch-worker.ts", import.meta.url), { workerData: settings })
    : new Worker(FROM_SOURCE, { eval: true, workerData: extend(settings, { file: new URL("./fetch-worker.ts", import.meta.url).href }) });
}

/**
 * Starts the fetch thread (`spawn` is for the tests, to start one that dies). A thread that dies
 * fails the fetches it held as this resolver's fault (`local_fault`, never the publisher's); the
 * next fetch starts a new one, after a second's rest.
 */
export function createThreadedFetcher(
  settings: ThreadSettings,
  hostBudget?: RateLimiter,
  spawn: (settings: ThreadSettings) => Worker = startWorker,
): ThreadedFetcher {
  const pending = new Map<number, { resolve: (o: FetchOutcome) => void; reject: (e: Error) => void }>();
  let next = 1;
  let latest: { gate: OutboundStats; sockets: SocketStats } = {
    gate: { active: 0, queued: 0, pending: 0, peakActive: 0, refused: 0 },
    sockets: { open: 0, peak: 0 },
  };
  // The same cap as the thread's, used here only to count fetches in from the moment they are asked
  // for: admission sees a full queue at once, and past it a fetch is refused busy without a round trip.
  const entry = createOutboundGate({ max: settings.maxOutbound, maxWaitMs: settings.timeoutMs });
  let thread: Worker | null = null;
  let closing: Promise<void> | null = null;
  let restAfterDeath = 0;

  const fault = (message: string) => new NotFetched("local_fault", message, 5);
  const settle = () => {
    // The thread keeps the process alive only while it holds fetches.
    if (pending.size === 0) thread?.unref();
    else thread?.ref();
  };

  function start(): Worker {
    const worker = spawn(settings);
    worker.on("message", (m: FromThread) => {
      if (m.kind === "stats") latest = { gate: m.gate, sockets: m.sockets };
      else if (m.kind === "budget") {
        const decide = hostBudget
          ? m.op === "take"
            ? hostBudget.take(m.host)
            : hostBudget.check(m.host)
          : Promise.resolve<RateDecision>({ ok: true });
        // The limiters fall back to their own count rather than throw; were one to, the fetch goes on rather than hang.
        void decide
          .catch((): RateDecision => ({ ok: true }))
          .then((decision) => worker.postMessage({ op: "budget", id: m.id, decision } satisfies ToThread));
      } else if (m.kind === "done" || m.kind === "refused" || m.kind === "failed") {
        const p = pending.get(m.id);
        pending.delete(m.id);
        settle();
        if (!p) return;
        if (m.kind === "done") p.resolve(m.outcome);
        else if (m.kind === "refused") p.reject(new NotFetched(m.refusal.kind, m.refusal.message, m.refusal.retryAfterS));
        else p.reject(fault(`this resolver could not fetch: ${m.message}`));
      }
    });
    const gone = (why: string) => {
      if (thread === worker) thread = null;
      // A thread that cannot start is not started again for every fetch: a second's rest first.
      restAfterDeath = Date.now() + 1000;
      for (const p of pending.values()) p.reject(fault(`this resolver's fetch thread stopped (${why}); try again shortly`));
      pending.clear();
    };
    worker.on("error", (err) => gone(err.message));
    worker.on("exit", (code) => gone(`exit code ${code}`));
    worker.unref();
    return worker;
  }

  const fetchOnThread: Fetcher = (url, mode, options = {}) => {
    if (closing) return Promise.reject(fault("this resolver is closing"));
    if (!thread && Date.now() < restAfterDeath) return Promise.reject(fault("this resolver's fetch thread stopped; try again shortly"));
    let ticket: Ticket;
    try {
      ticket = entry.enter();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    ticket.started(); // its wait for a slot is the thread's to time
    thread ??= start();
    const worker = thread;
    return new Promise<FetchOutcome>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      settle();
      worker.postMessage({ op: "fetch", id, url, mode, priority: options.priority ?? "person" } satisfies ToThread);
    }).finally(() => ticket.leave());
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
