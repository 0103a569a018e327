import { describe, expect, it } from "vitest";
import { createAtOnceLimiter } from "./at-once";

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
