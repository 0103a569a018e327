/**
 * The fetcher on a thread of its own (docs/architecture.md#fetch-and-memory): TLS handshakes,
 * decompression and the bodies' buffers and their garbage stay off the thread that answers pages.
 * lib/fetch/thread.ts starts it and speaks to it in its messages; the fetcher is the same as
 * in-thread, with the outbound gate and the per-minute budgets its requests spend counted here.
 */
import { parentPort, workerData } from "node:worker_threads";
import { connectRedis } from "../redis.ts";
import { createWindows, fetchBudgets, WINDOW_NAMES, type FetchTarget, type Take, type WindowName } from "../traffic/index.ts";
import { createOutboundGate } from "../traffic/outbound.ts";
import { takeTogether } from "../traffic/window.ts";
import { createFetcher } from "./fetcher.ts";
import type { FromThread, ThreadSettings, ToThread } from "./thread.ts";

const port = parentPort;
if (!port) throw new Error("fetch-worker runs as a worker thread");
const settings = workerData as ThreadSettings;

// docs/decisions.md#memory: this thread runs at the process's priority, as the one that answers
// pages does: a cold page's first document waits for its handshake here.
const post = (message: FromThread) => port.postMessage(message);

// docs/architecture.md#traffic: the budgets each request spends, counted here; in a fleet, in Redis
// on this thread's own connection (the keys every instance uses), and here alone while it cannot answer.
const spending = settings.budgets;
const fleet = spending?.fleet ?? null;
const link = fleet ? connectRedis(fleet.redisUrl, { log: (line) => post({ kind: "log", line: `fetch thread: ${line}` }) }) : null;
const counting = link && fleet ? { link, keyPrefix: fleet.keyPrefix } : null;
const windows = spending ? createWindows(spending.settings, counting, undefined, settings.timeoutMs) : null;
const spend = windows && spending ? fetchBudgets(windows, spending.settings) : null;
// A new thread's first requests wait for its connection (a second or so at most), so that they are
// counted with the fleet's rather than here alone.
const connected = link ? link.ping() : Promise.resolve(false);

const outbound = createOutboundGate({ max: settings.maxOutbound, maxQueued: settings.maxQueued, maxWaitMs: settings.timeoutMs });
const fetcher = createFetcher({
  timeoutMs: settings.timeoutMs,
  connectTo: settings.connectTo,
  userAgent: settings.userAgent,
  ...(settings.ca ? { ca: settings.ca } : {}),
  outbound,
  hostAtOnce: settings.hostAtOnce,
  addressAtOnce: settings.addressAtOnce,
  ...(spend
    ? {
        budgets: async (target: FetchTarget) => {
          await connected;
          return spend(target);
        },
      }
    : {}),
});

const isWindow = (name: string): name is WindowName => (WINDOW_NAMES as readonly string[]).includes(name);
/** The app thread's take, on this thread's limiter of the same name; null for one it does not count. */
const partOf = (take: Take) => (windows && isWindow(take.window) ? windows[take.window].part(take.key) : null);

/** The app thread's limiters of the budgets (its admission's check of a host's minute), answered from these counts. */
async function decide(takes: readonly Take[], take: boolean) {
  await connected;
  const parts = takes.map(partOf);
  return parts.every((p) => p !== null) ? takeTogether(parts, take) : { ok: true as const };
}
async function used(take: Take) {
  await connected;
  const part = partOf(take);
  return part ? part.counter.used(part.take) : { used: 0, oldestLeavesMs: 0 };
}

port.on("message", (m: ToThread) => {
  if (m.op === "fetch") {
    fetcher(m.url, m.mode, { priority: m.priority, client: m.client }).then(
      (outcome) => post({ kind: "done", id: m.id, outcome }),
      (err: unknown) => post({ kind: "failed", id: m.id, message: err instanceof Error ? err.message : String(err) }),
    );
  } else if (m.op === "decide") {
    // The counters fall back to their own count rather than throw; were one to, the limit fails open.
    decide(m.takes, m.take).then(
      (decision) => post({ kind: "decided", id: m.id, decision }),
      () => post({ kind: "decided", id: m.id, decision: { ok: true } }),
    );
  } else if (m.op === "used") {
    used(m.take).then(
      (count) => post({ kind: "used", id: m.id, used: count }),
      () => post({ kind: "used", id: m.id, used: { used: 0, oldestLeavesMs: 0 } }),
    );
  } else if (m.op === "stats") {
    post({ kind: "stats", id: m.id, gate: outbound.stats(), sockets: fetcher.sockets() });
  } else if (m.op === "close") {
    void Promise.all([fetcher.close(), link?.close()]).finally(() => post({ kind: "closed" }));
  }
});
