/**
 * Searches of the index at once (docs/architecture.md#traffic): `searchesAtOnce`, `searchesWaiting`,
 * `searchesInProgress`, each at its declared default, and the fair queue.
 */
import { describe, expect, it } from "vitest";
import { isRefusal } from "./refusal.ts";
import { trafficSettings } from "./limits.ts";
import { createSearchGate, searchGateOptions } from "./search-gate.ts";

const defaults = trafficSettings();
const gateAtDefaults = (now?: () => number) =>
  createSearchGate({
    atOnce: defaults.searchesAtOnce,
    waiting: defaults.searchesWaiting,
    perClient: defaults.searchesInProgress,
    ...(now ? { now } : {}),
  });

/** A search that runs until it is let go. */
function held() {
  let release: () => void = () => undefined;
  const done = new Promise<string>((resolve) => (release = () => resolve("done")));
  return { task: () => done, release: () => release() };
}
const tick = () => new Promise((r) => setTimeout(r, 0));

describe("searchesAtOnce, searchesWaiting", () => {
  it(`${defaults.searchesAtOnce} run at once, ${defaults.searchesWaiting} wait, the next is search_busy (503) with Retry-After`, async () => {
    const gate = gateAtDefaults();
    const h = held();
    let started = 0;
    const task = () => (started++, h.task());
    const runs = Array.from({ length: defaults.searchesAtOnce + defaults.searchesWaiting }, (_, i) => gate.run(`c${i}`, task));
    await tick();
    expect(started).toBe(defaults.searchesAtOnce);
    expect(gate.stats()).toMatchObject({ running: defaults.searchesAtOnce, waiting: defaults.searchesWaiting });
    const refused = await gate.run("c0-again", task);
    expect(refused).toMatchObject({ refused: "search_busy", retryAfterS: expect.any(Number) });
    expect(isRefusal(refused) && refused.message).toMatch(/^this resolver is searching its index as much as it may at once/);
    h.release();
    expect(await Promise.all(runs)).toEqual(Array(runs.length).fill("done"));
    expect(started).toBe(runs.length);
    expect(gate.stats()).toEqual({ running: 0, waiting: 0, clients: 0 });
  });
  it("a waiting search that gets no turn within its wait is search_busy, and leaves the queue", async () => {
    const gate = createSearchGate({ atOnce: 1, waiting: 4, perClient: 2, maxWaitMs: 30 });
    const h = held();
    const first = gate.run("a", h.task);
    expect(await gate.run("b", h.task)).toMatchObject({ refused: "search_busy" });
    expect(gate.stats()).toMatchObject({ running: 1, waiting: 0 });
    h.release();
    expect(await first).toBe("done");
  });
  it("a search that fails passes its failure on and gives its turn back", async () => {
    const gate = createSearchGate({ atOnce: 1, waiting: 1, perClient: 2 });
    await expect(gate.run("a", () => Promise.reject(new Error("engine down")))).rejects.toThrow("engine down");
    expect(await gate.run("a", async () => "next")).toBe("next");
    expect(gate.stats()).toEqual({ running: 0, waiting: 0, clients: 0 });
  });
});

describe("searchesInProgress", () => {
  it(`one client has at most ${defaults.searchesInProgress} in progress: the next is searches_in_progress (429); another client runs`, async () => {
    const gate = gateAtDefaults();
    const h = held();
    const mine = Array.from({ length: defaults.searchesInProgress }, () => gate.run("greedy", h.task));
    expect(await gate.run("greedy", h.task)).toMatchObject({ refused: "searches_in_progress", retryAfterS: 1 });
    expect(gate.wouldRefuse("greedy")).toMatchObject({ refused: "searches_in_progress" });
    expect(gate.wouldRefuse("other")).toBeNull();
    const other = gate.run("other", async () => "other's");
    expect(await other).toBe("other's");
    h.release();
    await Promise.all(mine);
    expect(gate.wouldRefuse("greedy")).toBeNull();
  });
});

describe("the fair queue", () => {
  it("the next to run is the client that has searched least lately, not the first to queue", async () => {
    const t = 0;
    const gate = createSearchGate({ atOnce: 1, waiting: 8, perClient: 8, now: () => t });
    const h = held();
    const order: string[] = [];
    const as = (client: string) => gate.run(client, async () => void order.push(client));
    // The flooder has searched a lot lately.
    for (let i = 0; i < 5; i++) await as("flooder");
    const running = gate.run("flooder", h.task);
    const queued = [as("flooder"), as("flooder"), as("newcomer")];
    await tick();
    order.length = 0;
    h.release();
    await Promise.all([running, ...queued]);
    expect(order).toEqual(["newcomer", "flooder", "flooder"]);
  });
  it("a full queue makes room for a newcomer by refusing the newest waiting search of the client that searched most lately", async () => {
    const t = 0;
    const gate = createSearchGate({ atOnce: 1, waiting: 2, perClient: 4, now: () => t });
    const h = held();
    for (let i = 0; i < 3; i++) await gate.run("flooder", async () => "warm");
    const running = gate.run("flooder", h.task);
    const first = gate.run("flooder", async () => "first");
    const second = gate.run("flooder", async () => "second");
    await tick();
    expect(gate.wouldRefuse("newcomer")).toBeNull();
    const newcomer = gate.run("newcomer", async () => "newcomer's");
    expect(await second).toMatchObject({ refused: "search_busy" });
    h.release();
    expect(await Promise.all([running, newcomer, first])).toEqual(["done", "newcomer's", "first"]);
  });
  it("a full queue refuses a client that has searched as much as every waiting one", async () => {
    const gate = createSearchGate({ atOnce: 1, waiting: 1, perClient: 4, now: () => 0 });
    const h = held();
    const running = gate.run("a", h.task);
    const waiting = gate.run("b", async () => "b");
    expect(await gate.run("c", async () => "c")).toMatchObject({ refused: "search_busy" });
    h.release();
    expect(await Promise.all([running, waiting])).toEqual(["done", "b"]);
  });
  it("a polite client (one search at a time) goes before a client with more in progress, however much it searched lately", async () => {
    const gate = createSearchGate({ atOnce: 1, waiting: 8, perClient: 2, now: () => 0 });
    const h = held();
    for (let i = 0; i < 20; i++) await gate.run("polite", async () => undefined);
    const order: string[] = [];
    const running = gate.run("crowd", h.task);
    const crowd = gate.run("crowd", async () => void order.push("crowd"));
    const polite = gate.run("polite", async () => void order.push("polite"));
    await tick();
    h.release();
    await Promise.all([running, crowd, polite]);
    expect(order).toEqual(["polite", "crowd"]);
  });
  it("a full queue refuses a heavier client's waiting search, never the polite newcomer's, whatever it searched lately", async () => {
    const gate = createSearchGate({ atOnce: 1, waiting: 2, perClient: 2, now: () => 0 });
    const h = held();
    for (let i = 0; i < 20; i++) await gate.run("polite", async () => undefined);
    const running = gate.run("a", h.task);
    const a2 = gate.run("a", async () => "a2");
    const b = gate.run("b", async () => "b");
    await tick();
    expect(gate.wouldRefuse("polite")).toBeNull();
    const polite = gate.run("polite", async () => "polite");
    expect(await a2).toMatchObject({ refused: "search_busy" });
    h.release();
    expect(await Promise.all([running, b, polite])).toEqual(["done", "b", "polite"]);
  });
  it("a client's requests in flight at the instance weigh, not only its searches in the gate: a crowd client refused its extra searches still weighs them", async () => {
    const gate = createSearchGate({ atOnce: 1, waiting: 2, perClient: 2, now: () => 0 });
    const h = held();
    for (let i = 0; i < 20; i++) await gate.run("polite", async () => undefined);
    // Each crowd client keeps 4 requests open (2 of them being refused elsewhere): one search each in the gate.
    const four = () => 4;
    const running = gate.run("a", h.task, four);
    const b = gate.run("b", async () => "b", four);
    const c = gate.run("c", async () => "c", four);
    await tick();
    const one = () => 1;
    expect(gate.wouldRefuse("polite", one)).toBeNull();
    const polite = gate.run("polite", async () => "polite", one);
    expect(await c).toMatchObject({ refused: "search_busy" });
    h.release();
    expect(await Promise.all([running, polite, b])).toEqual(["done", "polite", "b"]);
  });
  it("what a client searched fades: after a minute of quiet it stands as a newcomer again", async () => {
    let t = 0;
    const gate = createSearchGate({ atOnce: 1, waiting: 4, perClient: 4, now: () => t });
    const h = held();
    for (let i = 0; i < 10; i++) await gate.run("once-busy", async () => undefined);
    t = 60_000;
    await gate.run("lately", async () => undefined);
    const running = gate.run("x", h.task);
    const order: string[] = [];
    const queued = ["lately", "once-busy"].map((c) => gate.run(c, async () => void order.push(c)));
    await tick();
    h.release();
    await Promise.all([running, ...queued]);
    // 10 searches a minute ago weigh 10 / 2^6 ≈ 0.16, less than one search just now.
    expect(order).toEqual(["once-busy", "lately"]);
  });
});

describe("searchGateOptions: the gate on its engine", () => {
  it("the embedded engine runs one search at a time: the next waits in the gate's fair queue, not the engine's line", async () => {
    const gate = createSearchGate(searchGateOptions("embedded", defaults));
    const h = held();
    let started = 0;
    const runs = [gate.run("a", () => (started++, h.task())), gate.run("b", () => (started++, h.task()))];
    await tick();
    expect(started).toBe(1);
    expect(gate.stats()).toMatchObject({ running: 1, waiting: 1 });
    h.release();
    expect(await Promise.all(runs)).toEqual(["done", "done"]);
  });
  it(`a PostgreSQL server runs ${defaults.searchesAtOnce} side by side, with the same queue and per-client cap`, () => {
    expect(searchGateOptions("server", defaults)).toEqual({
      atOnce: defaults.searchesAtOnce,
      waiting: defaults.searchesWaiting,
      perClient: defaults.searchesInProgress,
    });
    expect(searchGateOptions("embedded", defaults)).toMatchObject({ atOnce: 1, waiting: defaults.searchesWaiting });
  });
});
