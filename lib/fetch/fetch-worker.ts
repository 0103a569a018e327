/**
 * The fetcher on a thread of its own (docs/decisions.md#memory): TLS handshakes, decompression and
 * the bodies' buffers and their garbage stay off the thread that answers pages. lib/fetch/thread.ts
 * starts it and speaks to it in the messages below; the fetcher is the same as in-thread.
 */
import { getPriority, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import type { FetchBudgets } from "../traffic";
import { createOutboundGate } from "../traffic/outbound";
import type { FetchRefusal } from "../traffic/refusal";
import { createFetcher } from "./fetcher";
import { THREAD_NICENESS, type FromThread, type ThreadSettings, type ToThread } from "./thread";

const port = parentPort;
if (!port) throw new Error("fetch-worker runs as a worker thread");
const settings = workerData as ThreadSettings;

// docs/decisions.md#memory: this thread yields the cores to the one that answers pages. On Linux a
// nice value belongs to a thread, and 0 names the calling one.
try {
  setPriority(Math.min(19, getPriority() + THREAD_NICENESS));
} catch {
  // Not allowed here: the thread runs at the process's priority.
}
const post = (message: FromThread) => port.postMessage(message);

// The per-minute budgets live on the app's thread (a fleet counts them in Redis): each request asks there.
const asked = new Map<number, (refused: FetchRefusal | null) => void>();
let nextAsk = 1;
const budgets: FetchBudgets = (target) =>
  new Promise((resolve) => {
    const id = nextAsk++;
    asked.set(id, resolve);
    post({ kind: "spend", id, target });
  });

const outbound = createOutboundGate({ max: settings.maxOutbound, maxQueued: settings.maxQueued, maxWaitMs: settings.timeoutMs });
const fetcher = createFetcher({
  timeoutMs: settings.timeoutMs,
  connectTo: settings.connectTo,
  userAgent: settings.userAgent,
  ...(settings.ca ? { ca: settings.ca } : {}),
  outbound,
  hostAtOnce: settings.hostAtOnce,
  addressAtOnce: settings.addressAtOnce,
  ...(settings.budgets ? { budgets } : {}),
});

// The counts the app's /metrics shows: sent when they change, after each fetch and every 200 ms.
let said = "";
const sayStats = () => {
  const stats = { gate: outbound.stats(), sockets: fetcher.sockets() };
  const text = JSON.stringify(stats);
  if (text !== said) post({ kind: "stats", ...stats });
  said = text;
};
setInterval(sayStats, 200).unref();

port.on("message", (m: ToThread) => {
  if (m.op === "spent") {
    asked.get(m.id)?.(m.refused);
    asked.delete(m.id);
  } else if (m.op === "fetch") {
    fetcher(m.url, m.mode, { priority: m.priority, client: m.client })
      .finally(sayStats)
      .then(
        (outcome) => post({ kind: "done", id: m.id, outcome }),
        (err: unknown) => post({ kind: "failed", id: m.id, message: err instanceof Error ? err.message : String(err) }),
      );
  } else if (m.op === "close") {
    void fetcher.close().finally(() => post({ kind: "closed" }));
  }
});
