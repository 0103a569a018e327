/**
 * The fetcher on its worker thread (lib/fetch/thread.ts, docs/decisions.md#memory), over real HTTPS
 * on loopback: it answers what the in-thread fetcher answers, spends the app thread's budgets,
 * refuses past the outbound queue before any round trip, and reports its counts for /metrics.
 */
import { describe, expect, it } from "vitest";
import { parseConnectTo } from "../../lib/fetch/connect-to";
import type { FetchOutcome } from "../../lib/fetch/fetcher";
import { createWindows, fetchBudgets, trafficSettings, type FetchBudgets, type FetchRefusal, type FetchTarget } from "../../lib/traffic";
import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { Worker } from "node:worker_threads";
import { createThreadedFetcher, FROM_SOURCE, THREAD_NICENESS, type ThreadSettings } from "../../lib/fetch/thread";
import { useSampleNetwork } from "../helpers/sample";

const S = "\u00a7";
const ctx = useSampleNetwork({
  extraSites: {
    "slow.test": {
      files: { "/ident.json": JSON.stringify({ network_id: `${S}:entity:slow.test` }) },
      routes: { "/ident.json": { delay_ms: 400 } },
    },
  },
});

function threaded(extra: Partial<ThreadSettings> = {}, budgets?: FetchBudgets, spawn?: (settings: ThreadSettings) => Worker) {
  const parsed = parseConnectTo(ctx.net.connectTo);
  if (!parsed.ok) throw new Error(parsed.message);
  const settings: ThreadSettings = {
    timeoutMs: 5000,
    connectTo: parsed.entries,
    userAgent: "ident-resolver/test",
    maxOutbound: 64,
    maxQueued: 256,
    hostAtOnce: 6,
    addressAtOnce: 32,
    ca: [ctx.net.caPem],
    budgets: budgets !== undefined,
    bundled: false,
  };
  return createThreadedFetcher(Object.assign(settings, extra), budgets, spawn);
}

/** The real thread, made to die (exit code 3) when it is asked for a URL ending in /crash, as a thread dies of a fault of its own. */
const CRASHING = `{
  // Wraps the thread's own listener: one of ours beside it would start the port early, and messages sent before the thread listens would be lost.
  const { parentPort } = require("node:worker_threads");
  const on = parentPort.on.bind(parentPort);
  parentPort.on = (event, listener) =>
    on(event, event !== "message" ? listener : (m) => (m.op === "fetch" && m.url.endsWith("/crash") ? process.exit(3) : listener(m)));
}
${FROM_SOURCE}`;
const withoutTime = (o: FetchOutcome | FetchRefusal) => ({ ...o, ms: 0 });

describe("the fetch thread", () => {
  it("answers every outcome as the in-thread fetcher does: found, not found, too large (a gzip bomb), blocked, unsupported encoding", async () => {
    const urls = [
      "https://alice.example/ident.json",
      "https://alice.example/no-such-document.json",
      "https://gzip-bomb.test/ident.json",
      "https://brotli-bomb.test/ident.json",
      "https://127.0.0.1/ident.json",
      "http://alice.example/ident.json",
    ];
    const onThread = threaded();
    const here = ctx.fetcher();
    try {
      for (const url of urls) expect(withoutTime(await onThread(url, "json"))).toEqual(withoutTime(await here(url, "json")));
      const found = await onThread(urls[0]!, "json");
      expect(found).toMatchObject({ ok: true, status: "found", httpStatus: 200 });
      expect("ok" in found && found.ok && JSON.parse(found.body)).toMatchObject({ network_id: `${S}:entity:alice.example` });
      expect(await onThread(urls[2]!, "json")).toMatchObject({ status: "too_large" });
    } finally {
      await onThread.close();
    }
  });

  it("spends the app thread's budgets for every request, with its client: past one, the refusal with when to retry", async () => {
    const settings = trafficSettings({ hostPerMinute: 2, hostSharePerMinute: 2 });
    const spend = fetchBudgets(createWindows(settings), settings);
    const asked: FetchTarget[] = [];
    const fetch = threaded({}, (target) => (asked.push(target), spend(target)));
    try {
      ctx.net.resetCounts();
      const outcomes = await Promise.all([1, 2, 3].map(() => fetch("https://alice.example/ident.json", "json", { client: "203.0.113.9" })));
      expect(outcomes.filter((o) => "ok" in o && o.ok)).toHaveLength(2);
      expect(outcomes.find((o) => "refused" in o)).toMatchObject({ refused: "host_budget", retryAfterS: expect.any(Number) });
      expect(asked.map((t) => [t.host, t.client])).toEqual(Array(3).fill(["alice.example", "203.0.113.9"]));
      expect(ctx.net.requests.get("alice.example/ident.json")).toBe(2);
    } finally {
      await fetch.close();
    }
  });

  it("past the outbound cap and its queue (1 + 4), a fetch is refused busy at once; admission sees the queue full; the counts come back", async () => {
    const fetch = threaded({ maxOutbound: 1, maxQueued: 4 });
    try {
      ctx.net.resetCounts();
      const all = Array.from({ length: 7 }, () => fetch("https://slow.test/ident.json", "json"));
      expect(fetch.outbound.full()).toBe(true);
      expect(fetch.outbound.stats().pending).toBe(5);
      const outcomes = await Promise.all(all);
      const refused = outcomes.filter((o) => "refused" in o);
      expect(refused).toHaveLength(2);
      for (const r of refused) expect(r).toMatchObject({ refused: "busy", retryAfterS: 5 });
      expect(outcomes.filter((o) => "ok" in o)).toHaveLength(5);
      expect(ctx.net.peakTotal()).toBe(1);
      expect(fetch.outbound.full()).toBe(false);
      // The thread sends its counts when they change, at most every 200 ms.
      for (let i = 0; i < 20 && fetch.outbound.stats().peakActive === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(fetch.outbound.stats()).toMatchObject({ active: 0, queued: 0, peakActive: 1, pending: 0 });
      expect(fetch.sockets().peak).toBe(1);
    } finally {
      await fetch.close();
    }
  });

  it("a thread that dies: the fetches it held fail as this resolver's fault, the next a second later starts a new thread that answers", async () => {
    let started = 0;
    const fetch = threaded({}, undefined, (settings) => {
      started++;
      return new Worker(CRASHING, {
        eval: true,
        workerData: { ...settings, file: new URL("../../lib/fetch/fetch-worker.ts", import.meta.url).href },
      });
    });
    try {
      expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ status: "found" });
      const held = fetch("https://slow.test/ident.json", "json");
      const crash = fetch("https://alice.example/crash", "json");
      for (const lost of await Promise.all([held, crash])) {
        expect(lost).toMatchObject({ refused: "local_fault", message: expect.stringContaining("fetch thread stopped (exit code 3)") });
      }
      // At once after, refused without starting a thread; a second later, a new one answers.
      expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ refused: "local_fault" });
      expect(started).toBe(1);
      await new Promise((r) => setTimeout(r, 1100));
      expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ status: "found" });
      expect(started).toBe(2);
    } finally {
      await fetch.close();
    }
  });

  it("runs below the thread that answers pages: its nice value is the process's plus 10 (Linux)", async () => {
    /** Each thread of this process and its nice value, from /proc. */
    const threads = () =>
      new Map(
        readdirSync("/proc/self/task").map((task) => {
          const stat = readFileSync(`/proc/self/task/${task}/stat`, "utf8");
          return [task, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])] as const;
        }),
      );
    const own = getPriority();
    const before = threads();
    const fetch = threaded();
    try {
      expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ ok: true });
      const started = [...threads()].filter(([task]) => !before.has(task)).map(([, nice]) => nice);
      expect(started).toContain(own + THREAD_NICENESS);
      expect(getPriority()).toBe(own);
    } finally {
      await fetch.close();
    }
  });

  it("once closed, a fetch is refused as this resolver's fault, never reported as the publisher's", async () => {
    const fetch = threaded();
    await fetch("https://alice.example/ident.json", "json");
    await fetch.close();
    expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ refused: "local_fault" });
  });

  it("a thread that cannot start: the fetch is refused as this resolver's fault, and its slot is given back", async () => {
    let spawned = 0;
    const fetch = threaded({ maxOutbound: 1, maxQueued: 0 }, undefined, () => {
      spawned++;
      throw new Error("ERR_WORKER_INIT_FAILED: no memory for a thread");
    });
    try {
      expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({
        refused: "local_fault",
        message: expect.stringContaining("could not start its fetch thread: ERR_WORKER_INIT_FAILED"),
      });
      // With one slot and no queue, a slot kept by the failed start would refuse this one as busy.
      expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ refused: "local_fault" });
      expect(spawned).toBe(2);
      expect(fetch.outbound.stats()).toMatchObject({ active: 0, pending: 0 });
    } finally {
      await fetch.close();
    }
  });
});
