import { describe, expect, it } from "vitest";
import { byHoldings, createHoldings, nextOf, refusedFor } from "./fair.ts";

describe("fair queues (docs/architecture.md#fair-queues)", () => {
  const holdings = createHoldings();
  for (const client of ["crowd", "crowd", "crowd", "other", "other", "polite"]) holdings.add(client);
  const weight = byHoldings(holdings);
  const queue = [{ client: "crowd" }, { client: "other" }, { client: "crowd" }, { client: "polite" }];

  it("the next to go is the waiter of the client holding the fewest places, the earliest among equals", () => {
    expect(nextOf(queue, weight)).toBe(3);
    expect(nextOf([{ client: "crowd" }, { client: "other" }, { client: "other" }], weight)).toBe(1);
    expect(nextOf([], weight)).toBe(-1);
  });
  it("a tie in places is broken by the tie-break, lower first", () => {
    const tied = createHoldings();
    tied.add("a");
    tied.add("b");
    const scores: Record<string, number> = { a: 5, b: 1 };
    expect(nextOf([{ client: "a" }, { client: "b" }], (w) => [tied.of(w.client), scores[w.client] ?? 0])).toBe(1);
  });
  it("a full queue refuses the newest waiter of the heaviest client for a lighter newcomer", () => {
    expect(refusedFor(queue, weight, [1, 0])).toBe(2);
    expect(refusedFor(queue, weight, [2, 0])).toBe(2);
  });
  it("never a waiter of a client as light as the newcomer: then the newcomer is the one refused", () => {
    expect(refusedFor(queue, weight, [3, 0])).toBe(-1);
    expect(refusedFor([{ client: "polite" }], weight, [1, 0])).toBe(-1);
  });
  it("holdings count places in and out, and forget a client that holds none", () => {
    const h = createHoldings();
    h.add("x");
    h.add("x");
    h.remove("x");
    expect([h.of("x"), h.clients()]).toEqual([1, 1]);
    h.remove("x");
    expect([h.of("x"), h.clients()]).toEqual([0, 0]);
  });
});
