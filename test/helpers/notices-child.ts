/**
 * One instance's notices in a process of its own, for test/integration/notices-killed.test.ts and bench/notices.ts: the index (`NOTICES_STORE`, a StoreLocation as JSON)
 * and the notifier sending to the bench's callbacks (`NOTICES_CONNECT_TO`, `NOTICES_CA`), driven over
 * IPC: `subscribe` (many webhooks at once, written as one statement), `record` (changes of verdict),
 * `memory` (this process's RSS, and its peak since the last ask). It says `ready` once started, and
 * runs until it is told to `stop` or is killed.
 */
import { readFileSync } from "node:fs";
import type { EntityResult } from "ident-resolver";
import { parseConnectTo } from "ident-resolver/node";
import { createCallbackClient, newWebhookSecret, startNotifier } from "ident-resolver/notify";
import { openStore, type StoreLocation } from "ident-resolver/store";
import { atomFeed } from "../../web/feeds";
import { credentialCheck } from "./checks";

export type ToChild =
  | { do: "subscribe"; topic: string; callbacks: string[] }
  | { do: "record"; domain: string; n: number; from: number }
  | { do: "memory" }
  | { do: "stop" };
export type FromChild =
  | { ready: true }
  | { subscribed: number }
  | { recorded: number; at: number[] }
  | {
      rss: number;
      peak: number;
      /** The heap's size (V8's `heapTotal`) when the RSS was at its peak. */
      peakHeap: number;
      heap: number;
      heapTotal: number;
      external: number;
      afterGc: number | null;
      heapAfterGc: number | null;
    }
  | { stopped: true };

const say = (m: FromChild) => process.send?.(m);
const where = JSON.parse(process.env.NOTICES_STORE ?? "{}") as StoreLocation;
const connectTo = parseConnectTo(process.env.NOTICES_CONNECT_TO ?? "");
if (!connectTo.ok) throw new Error(connectTo.message);

let clock = Date.parse("2026-08-01T00:00:00.000Z");
/** A check of `domain` whose one credential verifies or not, a minute after the last. */
function check(domain: string, verified: boolean): EntityResult {
  return credentialCheck(domain, [{ id: `@member@guild.example/${domain}`, verified }], new Date((clock += 60_000)).toISOString());
}

const store = await openStore(where, (line) => console.error(line));
const client = createCallbackClient({ connectTo: connectTo.entries, ca: [readFileSync(process.env.NOTICES_CA ?? "", "utf8")] });
const notifier = startNotifier({
  store,
  client,
  hubUrl: "https://resolver.example/hub",
  log: (line) => console.error(line),
  ...(process.env.NOTICES_AT_ONCE ? { atOnce: Number(process.env.NOTICES_AT_ONCE) } : {}),
  websubBody: (sub, change) =>
    atomFeed([change], {
      self: sub.topic,
      page: sub.topic,
      title: "t",
      since: change.at,
      entityPage: (d) => `https://resolver.example/entity/${d}`,
    }),
});
if (process.env.NOTICES_DEBUG) {
  setInterval(() => {
    void store.db
      .query("SELECT outcome, locked_until IS NOT NULL AS locked, due_at <= now() AS due, count(*) AS n FROM deliveries GROUP BY 1, 2, 3")
      .then((rows) =>
        console.error(
          `debug: running ${notifier.running} delivered ${notifier.delivered} failed ${notifier.failed} ${JSON.stringify(rows)}`,
        ),
      );
  }, 2000).unref();
}
/** The process's memory when its RSS was at its peak since the last `memory` asked. */
let atPeak = process.memoryUsage();
setInterval(() => {
  // The whole usage walks the heap's spaces: read only at a new peak.
  if (process.memoryUsage.rss() > atPeak.rss) atPeak = process.memoryUsage();
}, 50).unref();

process.on("message", (m: ToChild) => {
  void (async () => {
    if (m.do === "subscribe") {
      // One statement for thousands: as many webhooks as the API would make, without its limits.
      const [row] = await store.db.query<{ n: string }>(
        `WITH made AS (
           INSERT INTO subscriptions (id, via, topic, topic_kind, topic_domain, callback, secret, client, state, from_position)
           SELECT 'wh_bench_' || md5(random()::text || c), 'webhook', $1, $2, $3, c, $4, 'bench', 'active', (SELECT last FROM change_positions)
           FROM unnest($5::text[]) AS c RETURNING 1)
         SELECT count(*) AS n FROM made`,
        [
          m.topic,
          m.topic.endsWith("/changes.xml") ? "changes" : "entity",
          m.topic.endsWith("/changes.xml") ? null : /\/entity\/([^/]+)\//.exec(m.topic)?.[1],
          newWebhookSecret(),
          m.callbacks,
        ],
      );
      // As the app does once it has made a subscription (web/notices.ts): the notifier hands out at once.
      notifier.wake();
      return say({ subscribed: Number(row?.n ?? 0) });
    }
    if (m.do === "record") {
      const at: number[] = [];
      for (let i = 0; i < m.n; i++) {
        await store.record(check(m.domain, (m.from + i) % 2 === 0));
        at.push(Date.now());
      }
      return say({ recorded: m.n, at });
    }
    if (m.do === "memory") {
      const u = process.memoryUsage();
      // With --expose-gc (the bench), what is still held once the garbage is collected.
      const collect = (globalThis as { gc?: () => void }).gc;
      collect?.();
      const after = collect ? process.memoryUsage() : null;
      say({
        rss: u.rss,
        peak: atPeak.rss,
        peakHeap: atPeak.heapTotal,
        heap: u.heapUsed,
        heapTotal: u.heapTotal,
        external: u.external + u.arrayBuffers,
        afterGc: after?.rss ?? null,
        heapAfterGc: after?.heapUsed ?? null,
      });
      atPeak = process.memoryUsage();
      return;
    }
    await notifier.stop(15_000);
    await client.close();
    await store.close();
    say({ stopped: true });
    process.exit(0);
  })().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
});
say({ ready: true });
