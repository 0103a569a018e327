/**
 * The fetcher on its worker thread (lib/fetch/thread.ts, docs/architecture.md#fetch-and-memory), over
 * real HTTPS on loopback: it answers what the in-thread fetcher answers, spends the budgets it counts
 * itself, crosses the thread in one message each way per fetch, refuses past the outbound queue
 * before any round trip, and answers its counts for admission and /metrics when asked.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "ident-resolver/setup";
import { parseConnectTo } from "ident-resolver/node";
import type { FetchOutcome } from "ident-resolver/node";
import { createConfiguredResolver } from "ident-resolver/setup";
import { createWindows, trafficSettings, type FetchRefusal, type LimitName } from "ident-resolver/traffic";
import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { Worker } from "node:worker_threads";
import { createThreadedFetcher, startFetchWorker, type FromThread, type ThreadSettings, type ToThread } from "ident-resolver/node";
import { useSampleNetwork } from "../helpers/sample";

const S = "\u00a7";
const ctx = useSampleNetwork({
  extraSites: {
    "slow.test": {
      files: { "/ident.json": JSON.stringify({ network_id: `${S}:entity:slow.test` }) },
      routes: { "/ident.json": { delay_ms: 400 } },
    },
    "hop.test": { files: {}, routes: { "/ident.json": { redirect: "https://alice.example/ident.json" } } },
  },
});

/** A thread's fetcher; with `budgets`, the per-minute limits it counts, some set. */
function threaded(
  extra: Partial<ThreadSettings> = {},
  budgets?: Partial<Record<LimitName, number>>,
  spawn?: (settings: ThreadSettings) => Worker,
) {
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
    budgets: budgets ? { settings: trafficSettings(budgets), fleet: null } : null,
    bundled: false,
  };
  return createThreadedFetcher(Object.assign(settings, extra), spawn ? { spawn } : {});
}

/** The thread as the server starts it, with every message across it in both directions written down. */
function counted() {
  const messages: string[] = [];
  const spawn = (settings: ThreadSettings) => {
    const worker = startFetchWorker(settings);
    const post = worker.postMessage.bind(worker);
    worker.postMessage = (m: ToThread) => (messages.push(`to ${m.op}`), post(m));
    worker.on("message", (m: FromThread) => messages.push(`from ${m.kind}`));
    return worker;
  };
  return { messages, spawn };
}

/** The real thread, made to die (exit code 3) when it is asked for a URL ending in /crash, as a thread dies of a fault of its own. */
const CRASHING = `{
  // Wraps the thread's own listener: one of ours beside it would start the port early, and messages sent before the thread listens would be lost.
  const { parentPort } = require("node:worker_threads");
  const on = parentPort.on.bind(parentPort);
  parentPort.on = (event, listener) =>
    on(event, event !== "message" ? listener : (m) => (m.op === "fetch" && m.url.endsWith("/crash") ? process.exit(3) : listener(m)));
}
import("tsx/esm/api").then(({ register }) => (register(), import(${JSON.stringify(new URL("../../lib/fetch/fetch-worker.ts", import.meta.url).href)})));`;
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

  it("spends the budgets it counts for every request, with its client: past one, the refusal with when to retry", async () => {
    const fetch = threaded({}, { hostPerMinute: 3, hostSharePerMinute: 2 });
    try {
      ctx.net.resetCounts();
      const url = "https://alice.example/ident.json";
      const greedy = await Promise.all([1, 2, 3].map(() => fetch(url, "json", { client: "203.0.113.9" })));
      expect(greedy.filter((o) => "ok" in o && o.ok)).toHaveLength(2);
      expect(greedy.find((o) => "refused" in o)).toMatchObject({ refused: "client_share", retryAfterS: expect.any(Number) });
      expect(await fetch(url, "json", { client: "198.51.100.4" })).toMatchObject({ ok: true });
      expect(await fetch(url, "json", { client: "198.51.100.5" })).toMatchObject({ refused: "host_budget" });
      expect(ctx.net.requests.get("alice.example/ident.json")).toBe(3);
    } finally {
      await fetch.close();
    }
  });

  it("a fetch is one message each way, whatever its budgets say: 2 × N messages for N fetches, none while idle", async () => {
    const { messages, spawn } = counted();
    const fetch = threaded({}, { hostPerMinute: 2, hostSharePerMinute: 2 }, spawn);
    try {
      const urls = [
        "https://alice.example/ident.json", // spent
        "https://hop.test/ident.json", // two hops, each spending its own host's minute
        "https://alice.example/ident.json", // refused: alice.example's minute is spent
        "https://bob.example/ident.json",
        "https://bob.example/no-such-document.json", // not found, spent
        "https://bob.example/ident.json", // refused
        "http://bob.example/ident.json", // blocked before any request
      ];
      const outcomes = [];
      for (const url of urls) outcomes.push(await fetch(url, "json"));
      expect(outcomes.map((o) => ("refused" in o ? o.refused : o.status))).toEqual([
        "found",
        "found",
        "host_budget",
        "found",
        "not_found",
        "host_budget",
        "blocked",
      ]);
      const together = await Promise.all(Array.from({ length: 5 }, (_, i) => fetch(`https://carol.example/${i}.json`, "json")));
      expect(together.filter((o) => "refused" in o)).toHaveLength(3);
      const n = urls.length + together.length;
      await new Promise((r) => setTimeout(r, 500));
      // One after another: the fetch asked, its answer. Together: each asked, each answered, nothing else.
      expect(messages.slice(0, 2 * urls.length)).toEqual(urls.flatMap(() => ["to fetch", "from done"]));
      expect(messages.slice(2 * urls.length).sort()).toEqual([...Array<string>(5).fill("from done"), ...Array<string>(5).fill("to fetch")]);
      expect(messages).toHaveLength(2 * n);
    } finally {
      await fetch.close();
    }
  });

  it("this side's limiters of the budgets read the thread's count: a host's minute spent by fetches is refused to admission's check, one round trip", async () => {
    const { messages, spawn } = counted();
    const set = { hostPerMinute: 2, hostSharePerMinute: 2 };
    const fetch = threaded({}, set, spawn);
    const windows = createWindows(trafficSettings(set), null, undefined, 5000, fetch.budgets);
    try {
      expect(await windows.hostPerMinute.check("acme.example")).toEqual({ ok: true });
      for (let i = 0; i < 2; i++) expect(await fetch("https://acme.example/ident.json", "json")).toMatchObject({ ok: true });
      messages.length = 0;
      expect(await windows.hostPerMinute.check("acme.example")).toEqual({ ok: false, retryAfterS: expect.any(Number) });
      expect(messages).toEqual(["to decide", "from decided"]);
      expect(await windows.hostPerMinute.usage("acme.example")).toMatchObject({ limit: 2, remaining: 0 });
      expect(await windows.hostPerMinute.check("gamma.example")).toEqual({ ok: true });
    } finally {
      await fetch.close();
    }
  });

  it("built as the server builds it (lib/setup.ts), without Redis: admission's check of a host's minute reads what the thread spent", async () => {
    const parsed = parseConfig({ IDENT_CONNECT_TO: ctx.net.connectTo, IDENT_HOST_BUDGET_PER_MIN: "2", IDENT_CRAWL: "0" });
    if (!parsed.ok) throw new Error(parsed.errors.join("; "));
    const resolver = createConfiguredResolver(parsed.config, { ca: [ctx.net.caPem], fetchThread: { bundled: false }, log: () => {} });
    try {
      const host = resolver.traffic.windows.hostPerMinute;
      expect(await host.check("alice.example")).toEqual({ ok: true });
      await resolver.resolveEntity("alice.example", { refresh: true, client: "203.0.113.1" });
      await resolver.resolveEntity("alice.example", { refresh: true, client: "203.0.113.2" });
      expect(await host.check("alice.example")).toEqual({ ok: false, retryAfterS: expect.any(Number) });
      expect(await host.check("bob.example")).toEqual({ ok: true });
    } finally {
      await resolver.close();
    }
  });

  it("a person's fetch goes before background work that waited longer", async () => {
    const fetch = threaded({ maxOutbound: 1 });
    try {
      const order: string[] = [];
      const held = fetch("https://slow.test/ident.json", "json");
      await new Promise((r) => setTimeout(r, 100));
      const background = fetch("https://alice.example/ident.json", "json", { priority: "background" }).then(() => order.push("background"));
      await new Promise((r) => setTimeout(r, 20));
      const person = fetch("https://bob.example/ident.json", "json", { priority: "person" }).then(() => order.push("person"));
      await Promise.all([held, background, person]);
      expect(order).toEqual(["person", "background"]);
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
      expect((await fetch.outbound.stats()).pending).toBe(5);
      const outcomes = await Promise.all(all);
      const refused = outcomes.filter((o) => "refused" in o);
      expect(refused).toHaveLength(2);
      for (const r of refused) expect(r).toMatchObject({ refused: "busy", retryAfterS: 5 });
      expect(outcomes.filter((o) => "ok" in o)).toHaveLength(5);
      expect(ctx.net.peakTotal()).toBe(1);
      expect(fetch.outbound.full()).toBe(false);
      // The thread's counts, asked when read.
      expect(await fetch.outbound.stats()).toMatchObject({ active: 0, queued: 0, peakActive: 1, pending: 0, refused: 2 });
      expect((await fetch.sockets()).peak).toBe(1);
    } finally {
      await fetch.close();
    }
  });

  it("a thread that dies: the fetches it held fail as this resolver's fault, the next a second later starts a new thread that answers", async () => {
    let started = 0;
    const fetch = threaded({}, undefined, (settings) => {
      started++;
      return new Worker(CRASHING, { eval: true, workerData: settings });
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

  it("runs at the priority of the thread that answers pages: every thread it starts has the process's nice value (Linux)", async () => {
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
      expect(started.length).toBeGreaterThan(0);
      expect(new Set(started)).toEqual(new Set([own]));
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
      expect(await fetch.outbound.stats()).toMatchObject({ active: 0, pending: 0 });
    } finally {
      await fetch.close();
    }
  });
});
