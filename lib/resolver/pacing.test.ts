import { answered } from "../../test/helpers/answered.ts";
import { createServer, connect, type AddressInfo } from "node:net";
import { setImmediate } from "node:timers";
import { describe, expect, it } from "vitest";
import type { FetchOutcome } from "../fetch/outcome.ts";
import { AT_ONCE, nextPacedStart, waitingPieces } from "./pacing.ts";
import { createResolverCore } from ".";

/** Counts ticks of the event loop until stopped. */
function turnClock() {
  const clock = { turn: 0, stop: () => void (counting = false) };
  let counting = true;
  const tick = () => {
    clock.turn++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  return clock;
}

describe("claim checks take turns on the event loop (docs/decisions.md#outbound-work)", () => {
  it("one piece a tick: no two pieces of a lookup start on the same tick of the event loop", async () => {
    const clock = turnClock();
    const lookup = {};
    const turns = await Promise.all(Array.from({ length: 20 }, () => nextPacedStart(lookup).then(() => clock.turn)));
    clock.stop();
    expect(new Set(turns).size).toBe(20);
    expect(turns).toEqual([...turns].sort((a, b) => a - b));
  });

  it("lookups take turns: a lookup that asks behind another's 1,000 pieces starts its first on the second turn", async () => {
    const big = {};
    const small = {};
    const order: string[] = [];
    const bigs = Array.from({ length: 1000 }, (_, i) => nextPacedStart(big).then(() => order.push(`big ${i}`)));
    const smalls = [0, 1].map((i) => nextPacedStart(small).then(() => order.push(`small ${i}`)));
    await Promise.all([...bigs, ...smalls]);
    expect(order.slice(0, 5)).toEqual(["big 0", "small 0", "big 1", "small 1", "big 2"]);
    expect(order).toHaveLength(1002);
    expect(waitingPieces()).toBe(0);
  });

  it("the server reads its sockets between pieces: bytes sent while pieces wait are read before they are all done", async () => {
    const server = createServer((socket) => socket.end("hello"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const lookup = {};
    let pieces = 0;
    let readAfter = -1;
    const client = connect((server.address() as AddressInfo).port, "127.0.0.1");
    client.on("data", () => (readAfter = pieces));
    // Pieces that keep asking for more until the socket was read, or 200,000 of them.
    const more = (): Promise<void> =>
      nextPacedStart(lookup).then(() => {
        pieces++;
        return readAfter < 0 && pieces < 200_000 ? more() : undefined;
      });
    await Promise.all([more(), more()]);
    client.destroy();
    server.close();
    expect(readAfter).toBeGreaterThanOrEqual(0);
    expect(readAfter).toBeLessThan(200_000);
  });

  it(`a resolver starts a lookup's first ${AT_ONCE} claim checks at once, then each on a tick of its own`, async () => {
    const ALICE = "§:entity:alice.example";
    const properties = Array.from({ length: 50 }, (_, k) => ({ id: `§:property:p${k}.example` }));
    const clock = turnClock();
    const startedOn: number[] = [];
    const resolver = createResolverCore({
      limits: { maxClaims: 50 },
      // Every document answers at once, so without turns the whole lookup would end within one turn.
      fetch: async (url): Promise<FetchOutcome> => {
        const meta = { url, finalUrl: url, contentType: "application/json", ms: 1 };
        if (url === "https://alice.example/ident.json") {
          const body = JSON.stringify({ network_id: ALICE, properties });
          return { ...meta, ok: true, status: "found", httpStatus: 200, body, bytes: body.length };
        }
        if (url.endsWith("/ident-property.json")) startedOn.push(clock.turn);
        return { ...meta, ok: false, status: "not_found", httpStatus: 404, message: "404" };
      },
    });
    const result = answered(await resolver.resolveEntity("alice.example"));
    clock.stop();
    expect(result.properties).toHaveLength(50);
    expect(result.properties.every((c) => c.reason === "not_found")).toBe(true);
    expect(startedOn).toHaveLength(50);
    expect(new Set(startedOn.slice(0, AT_ONCE)).size).toBe(1);
    expect(new Set(startedOn.slice(AT_ONCE)).size).toBe(50 - AT_ONCE);
    expect(startedOn[AT_ONCE]).toBeGreaterThan(startedOn[0] ?? Infinity);
  });
});
