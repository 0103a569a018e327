/**
 * `npm run load -- badges` (docs/architecture.md#traffic, `storeReads`): one client asks the badges
 * of 10,000 domains the index does not know, 200 at a time, asking again as soon as it is answered
 * (each a read of the index), while another client reads a badge of a domain of its own every 200 ms
 * (well within its own 600 a minute)
 * from a process of its own. Goal: the first is refused past its 600 reads a minute, and the other's
 * p95 stays within 2 × its p95 at rest. Stops after the 10,000 or 60 s.
 */
import { Agent } from "node:http";
import { counts, get, p95, sleep, startApp, stopApp } from "./load-kit";
import { politeClient } from "./load-fair";

const ASKED = 10_000;
const AT_ONCE = 200;

/** `n` badges of domains no one has asked for, under `prefix`. */
const badges = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `/entity/${prefix}${i}.badges.test/badge.svg`);

/** One client asking every badge of `targets`, `AT_ONCE` at a time, for at most `ms`: the statuses and how long it took. */
async function flood(port: number, targets: string[], ms: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: AT_ONCE });
  const from = { "x-forwarded-for": "10.94.0.1" };
  const t0 = performance.now();
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      while (next < targets.length && performance.now() - t0 < ms)
        statuses.push((await get(port, targets[next++] ?? "/", from, 30_000, agent)).status);
    }),
  );
  agent.destroy();
  return { statuses, s: (performance.now() - t0) / 1000 };
}

export async function badgesRun(env: Record<string, string>): Promise<void> {
  const app = await startApp(3435, { ...env, IDENT_TRUSTED_HOPS: "1" });
  try {
    const polite = { "x-forwarded-for": "10.95.0.1" };
    let stop = politeClient(app.port, badges("rest", 1000), polite, 200);
    await sleep(6000);
    const calm = await stop();
    stop = politeClient(app.port, badges("polite", 1000), polite, 200);
    const flooded = await flood(app.port, badges("flood", ASKED), 60_000);
    const during = await stop();
    const refused = during.filter((a) => a.status !== 200).length;
    const [restP95, amidP95] = [p95(calm.map((a) => a.ms)), p95(during.map((a) => a.ms))];
    console.log(
      `badges    one client asking the badges of ${flooded.statuses.length.toLocaleString("en-US")} domains the index does not know, ${AT_ONCE} at once: ` +
        `${counts(flooded.statuses)} in ${flooded.s.toFixed(1)} s (goal: 429 past 600 a minute); another client, a badge every 200 ms: ` +
        `${during.length} requests, ${refused} refused, p95 ${amidP95.toFixed(1)} ms vs ${restP95.toFixed(1)} ms at rest over ${calm.length} ` +
        `(${(amidP95 / restP95).toFixed(2)} ×; goal ≤ 2 ×)`,
    );
  } finally {
    await stopApp(app);
  }
}
