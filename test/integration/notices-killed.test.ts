/**
 * Nothing lost when the process dies (docs/notices.md#delivery): an instance SIGKILLed with deliveries
 * pending, some of them sent and not yet answered, delivers every one after it starts again on the
 * same embedded folder; one sent again carries the id it had.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newEmbeddedDir } from "../helpers/engines";
import { spawnNotices } from "../helpers/notices-instance";
import { scratchDir } from "../helpers/scratch";
import { startHooks, type Hooks, type Received } from "../network/hooks";

let hooks: Hooks;
let caFile: string;
beforeAll(async () => {
  hooks = await startHooks();
  caFile = path.join(scratchDir("ident-killed-"), "ca.pem");
  writeFileSync(caFile, hooks.caPem);
});
afterAll(() => hooks?.close());

const slow = (r: Received) => r.host === "slow.hooks.test" && r.method === "POST";

it("SIGKILL with 200 deliveries pending: every one is delivered after the restart, a repeat with the same id", async () => {
  const where = { kind: "embedded" as const, dataDir: newEmbeddedDir(scratchDir("ident-killed-")) };
  let instance = await spawnNotices(where, hooks, caFile);
  await instance.record("kill.example", 1, 0);
  await instance.ask({
    do: "subscribe",
    topic: "https://resolver.example/entity/kill.example/feed.xml",
    callbacks: ["https://slow.hooks.test/k"],
  });
  // The callback answers after a second, four at once: most of the 200 still wait when the process dies.
  hooks.slowMs = 1000;
  await instance.record("kill.example", 200, 1);
  // Killed as a request has just arrived: its answer is a second away, so it is in flight.
  const seen = hooks.received.filter(slow).length;
  await hooks.waitFor(slow, seen + 1);
  const before = hooks.received.filter(slow).length;
  await instance.kill();
  expect(before).toBeLessThan(100);
  hooks.slowMs = 0;
  instance = await spawnNotices(where, hooks, caFile);
  const ids = () => new Set(hooks.received.filter(slow).map((r) => String(r.headers["webhook-id"])));
  await expect.poll(() => ids().size, { timeout: 60_000 }).toBe(200);
  await instance.stop();
  // Those in flight at the kill were sent again: more requests than ids, each repeat under its own id.
  const all = hooks.received.filter(slow);
  expect(all.length).toBeGreaterThan(200);
  expect(ids().size).toBe(200);
}, 120_000);
