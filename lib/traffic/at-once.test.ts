import { describe, expect, it, vi } from "vitest";
import { createAtOnceLimiter, WAITED_LONG_MS } from "./at-once.ts";

describe("at once per key (docs/architecture.md#traffic: hostAtOnce, addressAtOnce)", () => {
  it("runs at most 6 per host, others in parallel, and finishes all", async () => {
    const run = createAtOnceLimiter(6);
    const active = new Map<string, number>();
    const peak = new Map<string, number>();
    const task = (host: string) =>
      run(host, async () => {
        active.set(host, (active.get(host) ?? 0) + 1);
        peak.set(host, Math.max(peak.get(host) ?? 0, active.get(host)!));
        await new Promise((r) => setTimeout(r, 5));
        active.set(host, active.get(host)! - 1);
        return host;
      });
    const results = await Promise.all([
      ...Array.from({ length: 20 }, () => task("a.example")),
      ...Array.from({ length: 4 }, () => task("B.example")),
    ]);
    expect(results).toHaveLength(24);
    expect(peak.get("a.example")).toBe(6);
    expect(peak.get("B.example")).toBe(4);
  });
  it("the next to run at a key is the client with the fewest tasks there, not the first to wait (docs/architecture.md#fair-queues)", async () => {
    const run = createAtOnceLimiter(2);
    const order: string[] = [];
    const gates: (() => void)[] = [];
    const hold = () => new Promise<void>((r) => gates.push(r));
    const running = [run("a", hold, undefined, "crowd"), run("a", hold, undefined, "crowd")];
    const crowd = [1, 2, 3].map((n) => run("a", async () => void order.push(`crowd${n}`), undefined, "crowd"));
    const polite = run("a", async () => void order.push("polite"), undefined, "polite");
    expect(run.load("a")).toBe(6);
    gates.shift()?.();
    await polite;
    gates.shift()?.();
    await Promise.all([...running, ...crowd]);
    expect(order).toEqual(["polite", "crowd1", "crowd2", "crowd3"]);
    expect(run.load("a")).toBe(0);
  });
  it("a heavier client's task is not kept waiting for ever by a stream of lighter ones: past WAITED_LONG_MS it goes first (docs/architecture.md#fair-queues)", async () => {
    vi.useFakeTimers();
    try {
      const run = createAtOnceLimiter(1);
      const ran: string[] = [];
      // One task at a time, each taking 100 ms; behind another's, the heavy client queues two, then a new light client arrives every 100 ms.
      const task = (name: string) => () => new Promise<void>((r) => setTimeout(() => (ran.push(name), r()), 100));
      const first = run("engine", task("first"), undefined, "first");
      const heavy = [run("engine", task("heavy1"), undefined, "heavy"), run("engine", task("heavy2"), undefined, "heavy")];
      const light: Promise<void>[] = [];
      for (let i = 0; i < 150; i++) {
        light.push(run("engine", task(`light${i}`), undefined, `light${i}`));
        await vi.advanceTimersByTimeAsync(100);
      }
      // Without the rule, heavy1 would still wait (every light client weighs 1, the heavy client 2).
      expect(ran).toContain("heavy1");
      const at = ran.indexOf("heavy1");
      expect(at).toBeGreaterThan(ran.indexOf("light0"));
      expect(at * 100).toBeLessThanOrEqual(WAITED_LONG_MS + 200);
      await vi.advanceTimersByTimeAsync(100 * 200);
      await Promise.all([first, ...heavy, ...light]);
    } finally {
      vi.useRealTimers();
    }
  });
  it("releases its slot when a task throws", async () => {
    const run = createAtOnceLimiter(1);
    await expect(
      run("a", async () => {
        throw new Error("x");
      }),
    ).rejects.toThrow("x");
    await expect(run("a", async () => 1)).resolves.toBe(1);
  });
  it("a waiter whose signal aborts leaves the queue with the signal's reason; the others still get their turn", async () => {
    const run = createAtOnceLimiter(1);
    let release!: () => void;
    const first = run("a", () => new Promise<void>((r) => (release = r)));
    const controller = new AbortController();
    const abandoned = run("a", async () => "ran", controller.signal).catch((e: unknown) => e);
    const next = run("a", async () => "next");
    controller.abort(new Error("waited too long"));
    expect(await abandoned).toMatchObject({ message: "waited too long" });
    release();
    await first;
    expect(await next).toBe("next");
    expect(run.load("a")).toBe(0);
  });
});
