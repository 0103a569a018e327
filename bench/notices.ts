/**
 * Notices' figures (docs/notices.md), `BENCH_ONLY=notices`: each instance's notifier runs in a process
 * of its own (test/helpers/notices-child.ts), its callbacks are an HTTPS subscriber in this one
 * (test/network/hooks.ts), all on loopback.
 *
 *   latency   a change recorded → delivered to a webhook and a WebSub callback   goal p95 ≤ 2 s
 *   fan-out   10,000 subscribers of one topic: all delivered                     goal ≤ 60 s, notifier's RSS ≤ +64 MB
 *             with 100 of them hanging: the others, and a probe's changes        goal probe p95 ≤ 2 s
 *   killed    SIGKILL with deliveries pending; all delivered after a restart     goal none lost, repeats carry their id
 *   fleet     two instances on one PostgreSQL, 1,000 changes                     goal each delivered once
 *   looking   a proof broken at a followed entity's publisher, nobody visiting,
 *             the app with IDENT_FOLLOW_RECHECK_S=60                            goal delivered ≤ 60 s + 1 min
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { StoreLocation } from "ident-resolver/store";
import { startPostgres } from "../test/helpers/postgres";
import { scratchDir } from "../test/helpers/scratch";
import { startHooks, type Hooks, type Received } from "../test/network/hooks";
import { spawnNotices, type NoticesInstance } from "../test/helpers/notices-instance";
import { benchLooking } from "./notices-looking";
import { HEAP_GROWING_FLAG, SERVER_NODE_FLAGS } from "../scripts/server-flags.js";

/** `BENCH_NOTICES=latency,fanout,hanging,killed,fleet,looking`: some of them; all when unset. */
const PARTS = new Set((process.env.BENCH_NOTICES ?? "latency,fanout,hanging,killed,fleet,looking").split(","));

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;
const MB = 1024 * 1024;
/** Each instance runs with the server's own Node flags and heap growth (scripts/server-flags.js), as the app's notifier does; and may be told to collect its garbage, to say what it still holds. */
const spawnChild = (where: StoreLocation, hooks: Hooks, caFile: string) =>
  spawnNotices(where, hooks, caFile, [...SERVER_NODE_FLAGS, "--expose-gc", HEAP_GROWING_FLAG]);
type Child = NoticesInstance;
const recorded = async (c: Child, domain: string, n: number, from = 1) => ({ at: await c.record(domain, n, from) });
const stop = (c: Child) => c.stop();
const embedded = (): StoreLocation => ({ kind: "embedded", dataDir: path.join(scratchDir("ident-bench-notices-"), "data") });
const at = (host: string) => (r: Received) => r.host === host && r.method === "POST";

/** A change recorded → its delivery to a webhook and a WebSub callback, one change at a time. */
async function latency(hooks: Hooks, caFile: string): Promise<void> {
  const c = await spawnChild(embedded(), hooks, caFile);
  await recorded(c, "lat.example", 1, 0);
  const topic = "https://resolver.example/entity/lat.example/feed.xml";
  await c.ask({ do: "subscribe", topic, callbacks: ["https://lat-webhook.hooks.test/", "https://lat-websub.hooks.test/"] });
  const times: number[] = [];
  for (let i = 1; i <= 40; i++) {
    const { at: done } = await recorded(c, "lat.example", 1, i);
    for (const host of ["lat-webhook.hooks.test", "lat-websub.hooks.test"]) {
      const got = await hooks.waitFor(at(host), i, 10_000);
      times.push((got[i - 1]?.at ?? NaN) - (done[0] ?? NaN));
    }
  }
  await stop(c);
  console.log(
    `notices latency: change recorded → delivered, ${times.length} deliveries: p50 ${quantile(times, 0.5)} ms, p95 ${quantile(times, 0.95)} ms (goal p95 ≤ 2000)`,
  );
}

/** 10,000 subscribers of one topic, `hanging` of them never answering; a probe's changes meanwhile. */
async function fanOut(hooks: Hooks, caFile: string, hanging: number): Promise<void> {
  const c = await spawnChild(embedded(), hooks, caFile);
  await recorded(c, "crowd.example", 1, 0);
  await recorded(c, "probe.example", 1, 0);
  const tag = hanging ? "h" : "n";
  const callbacks = Array.from({ length: 10_000 }, (_, i) =>
    i < hanging ? `https://hang${i}.hooks.test/` : `https://${tag}${i}.hooks.test/`,
  );
  await c.ask({ do: "subscribe", topic: "https://resolver.example/entity/crowd.example/feed.xml", callbacks });
  await c.ask({
    do: "subscribe",
    topic: "https://resolver.example/entity/probe.example/feed.xml",
    callbacks: [`https://probe-${tag}.hooks.test/`],
  });
  const before = (await c.ask({ do: "memory" })) as { rss: number; heapTotal: number; heapAfterGc: number };
  const others = (r: Received) => r.method === "POST" && r.host.startsWith(tag) && /^[nh]\d+\./.test(r.host);
  const { at: done } = await recorded(c, "crowd.example", 1, 1);
  const start = done[0] ?? Date.now();
  // The probe: one change every 250 ms while the crowd's deliveries run.
  const probeTimes: number[] = [];
  for (let i = 1; i <= 20; i++) {
    const { at: p } = await recorded(c, "probe.example", 1, i);
    const got = await hooks.waitFor(at(`probe-${tag}.hooks.test`), i, 30_000);
    probeTimes.push((got[i - 1]?.at ?? NaN) - (p[0] ?? NaN));
    await new Promise((r) => setTimeout(r, 250));
  }
  const all = await hooks.waitFor(others, 10_000 - hanging, 120_000);
  const last = Math.max(...all.map((r) => r.at));
  const mem = (await c.ask({ do: "memory" })) as { peak: number; peakHeap: number; heapAfterGc: number };
  const peakHeap = mem.peakHeap - before.heapTotal;
  await stop(c);
  console.log(
    `notices fan-out: 10,000 subscribers${hanging ? `, ${hanging} hanging` : ""}: ${all.length} delivered in ${((last - start) / 1000).toFixed(1)} s ` +
      `(goal ≤ 60 s); notifier RSS +${((mem.peak - before.rss) / MB).toFixed(1)} MB at its peak (goal ≤ 64; of it the heap +${(peakHeap / MB).toFixed(1)}, the rest +${((mem.peak - before.rss - peakHeap) / MB).toFixed(1)}), the heap +${((mem.heapAfterGc - before.heapAfterGc) / MB).toFixed(1)} MB once collected; a probe's changes meanwhile: ` +
      `p50 ${quantile(probeTimes, 0.5)} ms, p95 ${quantile(probeTimes, 0.95)} ms (goal p95 ≤ 2000)`,
  );
}

/** SIGKILL with deliveries pending, then a restart on the same folder. */
async function killed(hooks: Hooks, caFile: string): Promise<void> {
  const where = embedded();
  let c = await spawnChild(where, hooks, caFile);
  await recorded(c, "kill.example", 1, 0);
  await c.ask({
    do: "subscribe",
    topic: "https://resolver.example/entity/kill.example/feed.xml",
    callbacks: ["https://slow.hooks.test/k"],
  });
  hooks.slowMs = 1000;
  await recorded(c, "kill.example", 1000, 1);
  const before = hooks.received.filter(at("slow.hooks.test")).length;
  await c.kill();
  hooks.slowMs = 0;
  const restarted = Date.now();
  c = await spawnChild(where, hooks, caFile);
  const ids = async () => new Set((await hooks.waitFor(at("slow.hooks.test"), 0, 0)).map((r) => String(r.headers["webhook-id"])));
  for (let waited = 0; (await ids()).size < 1000 && waited < 240_000; waited += 250) {
    if (process.env.BENCH_TRACE && waited % 5000 === 0) console.log(`  after ${waited / 1000} s: ${(await ids()).size} ids`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const got = hooks.received.filter(at("slow.hooks.test"));
  const distinct = await ids();
  await stop(c);
  console.log(
    `notices killed: SIGKILL with ${1000 - before} of 1,000 deliveries not yet answered; after the restart ${distinct.size} of 1,000 distinct ids ` +
      `delivered in ${((Date.now() - restarted) / 1000).toFixed(1)} s, ${got.length - distinct.size} repeats (each with its id); lost ${1000 - distinct.size} (goal 0)`,
  );
}

/** Two instances on one PostgreSQL, 1,000 changes recorded by both. */
async function fleet(hooks: Hooks, caFile: string): Promise<void> {
  const pg = await startPostgres();
  try {
    const where: StoreLocation = { kind: "server", url: await pg.database("notices") };
    const [a, b] = [await spawnChild(where, hooks, caFile), await spawnChild(where, hooks, caFile)];
    await recorded(a, "fleet-a.example", 1, 0);
    await recorded(b, "fleet-b.example", 1, 0);
    await a.ask({ do: "subscribe", topic: "https://resolver.example/changes.xml", callbacks: ["https://fleet.hooks.test/"] });
    await Promise.all([recorded(a, "fleet-a.example", 500, 1), recorded(b, "fleet-b.example", 500, 1)]);
    const got = await hooks.waitFor(at("fleet.hooks.test"), 1000, 120_000);
    await new Promise((r) => setTimeout(r, 2000));
    const all = hooks.received.filter(at("fleet.hooks.test"));
    const distinct = new Set(all.map((r) => String(r.headers["webhook-id"])));
    await Promise.all([stop(a), stop(b)]);
    console.log(
      `notices fleet: two instances on one PostgreSQL, 1,000 changes: ${distinct.size} delivered, ${all.length - distinct.size} twice (goal 1,000 and 0)` +
        (got.length < 1000 ? `; only ${got.length} within 120 s` : ""),
    );
  } finally {
    await pg.stop();
  }
}

export async function benchNotices(): Promise<void> {
  const hooks = await startHooks();
  const caFile = path.join(scratchDir("ident-bench-hooks-"), "ca.pem");
  writeFileSync(caFile, hooks.caPem);
  try {
    if (PARTS.has("latency")) await latency(hooks, caFile);
    if (PARTS.has("fanout")) await fanOut(hooks, caFile, 0);
    if (PARTS.has("hanging")) await fanOut(hooks, caFile, 100);
    if (PARTS.has("killed")) await killed(hooks, caFile);
    if (PARTS.has("fleet")) await fleet(hooks, caFile);
    if (PARTS.has("looking")) await benchLooking(hooks, readFileSync(caFile, "utf8"));
  } finally {
    await hooks.close();
  }
}
