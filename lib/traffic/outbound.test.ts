import { describe, expect, it, vi } from "vitest";
import { createOutboundGate } from "./outbound.ts";
import { isRefusal, type Refusal } from "./refusal.ts";

/** A ticket that was not refused. */
function admitted<T extends object>(ticket: T | Refusal): T {
  if (isRefusal(ticket)) throw new Error(ticket.message);
  return ticket;
}

describe("outbound cap (docs/decisions.md#outbound-work: IDENT_MAX_OUTBOUND)", () => {
  it("holds at most `max` in flight; the next waits and gets the slot given back", async () => {
    const gate = createOutboundGate({ max: 2, maxWaitMs: 1000 });
    const a = await gate.acquire("person");
    await gate.acquire("person");
    let third = false;
    const waiting = gate.acquire("person").then((release) => {
      third = true;
      return release;
    });
    await Promise.resolve();
    expect(third).toBe(false);
    expect(gate.stats()).toMatchObject({ active: 2, queued: 1 });
    a();
    a(); // a second release of one slot changes nothing
    (await waiting)();
    expect(third).toBe(true);
    expect(gate.stats()).toMatchObject({ active: 1, queued: 0, peakActive: 2 });
  });
  it("a person's fetch goes before background work queued earlier", async () => {
    const gate = createOutboundGate({ max: 1, maxWaitMs: 1000 });
    const first = await gate.acquire("person");
    const order: string[] = [];
    const background = gate.acquire("background").then((r) => (order.push("background"), r));
    const person = gate.acquire("person").then((r) => (order.push("person"), r));
    first();
    (await person)();
    (await background)();
    expect(order).toEqual(["person", "background"]);
  });
  it("a slot goes to the person's fetch of the client with the fewest fetches in flight or waiting, not the first queued (docs/architecture.md#fair-queues)", async () => {
    const gate = createOutboundGate({ max: 2, maxWaitMs: 1000 });
    const order: string[] = [];
    const first = await gate.acquire("person", undefined, "crowd");
    await gate.acquire("person", undefined, "crowd");
    const crowd = [1, 2, 3].map((n) => gate.acquire("person", undefined, "crowd").then((r) => (order.push(`crowd${n}`), r)));
    const polite = gate.acquire("person", undefined, "polite").then((r) => (order.push("polite"), r));
    first();
    (await polite)();
    for (const c of crowd) (await c)();
    expect(order).toEqual(["polite", "crowd1", "crowd2", "crowd3"]);
  });
  it("past the queue's bound a fetch is refused at once as busy, with when to retry", () => {
    const gate = createOutboundGate({ max: 1, maxQueued: 1, maxWaitMs: 5000 });
    const first = admitted(gate.enter());
    admitted(gate.enter()).started();
    expect(gate.full()).toBe(true);
    expect(gate.enter()).toMatchObject({ refused: "busy", retryAfterS: 5 });
    expect(gate.stats()).toMatchObject({ pending: 2, refused: 1 });
    first.leave();
    first.leave(); // leaving twice changes nothing
    expect(gate.full()).toBe(false);
    expect(gate.stats().pending).toBe(1);
  });
  it("a fetch that waits longer than maxWaitMs is refused and leaves the queue", async () => {
    vi.useFakeTimers();
    try {
      const gate = createOutboundGate({ max: 1, maxWaitMs: 100 });
      await gate.acquire("person");
      const ticket = admitted(gate.enter());
      const waiting = gate.acquire("background", ticket.signal).catch((e: unknown) => e);
      vi.advanceTimersByTime(101);
      expect(await waiting).toMatchObject({ refused: "busy" });
      expect(gate.stats()).toMatchObject({ active: 1, queued: 0, refused: 1 });
      ticket.leave();
    } finally {
      vi.useRealTimers();
    }
  });
});
