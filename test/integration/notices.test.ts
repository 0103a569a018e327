/**
 * Notices (docs/notices.md) on both engines, to real HTTPS callbacks on loopback (test/network/hooks.ts):
 * a change recorded is handed out once to each subscriber of its feed and delivered, a webhook signed
 * as Standard Webhooks says (verified by the `standardwebhooks` package), a WebSub callback with its
 * feed's new entry (read by a real feed parser) and `X-Hub-Signature`; ids stable across repeats;
 * failures retried, given up, and a subscription ended; a hanging callback delays only its own; two
 * notifiers on one PostgreSQL deliver each change once.
 */
import { createHmac } from "node:crypto";
import type { LookupAddress } from "node:dns";
import { parseFeed } from "@rowanmanning/feed-parser";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addSubscription,
  deliveriesOf,
  fanOut,
  getSubscription,
  markFailed,
  openStore,
  takeDue,
  FAILING_ENDS_S,
  RETRY_FOR_S,
  type Db,
  type DueDelivery,
  type Store,
  type Topic,
  type Tx,
} from "ident-resolver/store";
import { createCallbackClient, newWebhookSecret, startNotifier, type Notifier } from "ident-resolver/notify";
import { atomFeed } from "../../web/feeds";
import { credentialCheck, type CredentialSpec } from "../helpers/checks";
import { useEngines } from "../helpers/engines";
import { startHooks, type Hooks, type Received } from "../network/hooks";

const ORIGIN = "https://resolver.example";
const HUB = `${ORIGIN}/hub`;
let clock = Date.parse("2026-06-01T08:00:00.000Z");
const next = () => new Date((clock += 60_000)).toISOString();

const result = (domain: string, credentials: CredentialSpec[]) => credentialCheck(domain, credentials, next());

const entityTopic = (domain: string): Topic => ({ url: `${ORIGIN}/entity/${domain}/feed.xml`, kind: "entity", domain });
const issuerTopic = (domain: string): Topic => ({ url: `${ORIGIN}/issuer/${domain}/feed.xml`, kind: "issuer", domain });
const EVERY: Topic = { url: `${ORIGIN}/changes.xml`, kind: "changes", domain: null };

let hooks: Hooks;
beforeAll(async () => {
  hooks = await startHooks();
});
afterAll(() => hooks?.close());

const client = (timeoutMs = 5000) => createCallbackClient({ connectTo: hooks.connectTo, ca: [hooks.caPem], timeoutMs });
const websubBody = (sub: { topic: string }, change: Parameters<typeof atomFeed>[0][number]) =>
  atomFeed([change], { self: sub.topic, page: ORIGIN, title: "changes", since: change.at, entityPage: (d) => `${ORIGIN}/entity/${d}` });
const notifier = (store: Store, timeoutMs = 5000) =>
  startNotifier({ store, client: client(timeoutMs), websubBody, hubUrl: HUB, pollMs: 100, log: () => undefined });
const at = (host: string) => (r: Received) => r.host === host && r.method === "POST";

const { engines: ENGINES } = useEngines("notices");

describe.each(ENGINES)("notices on $name", ({ name, location }) => {
  let store: Store;
  let running: Notifier | undefined;
  let failing: DueDelivery | undefined;
  const logs: string[] = [];
  /** A callback host of this engine's own: both engines' runs share the receiver. */
  const host = (label: string) => `${name.toLowerCase()}-${label}.hooks.test`;
  beforeAll(async () => {
    store = await openStore(await location(), (l) => logs.push(l), { followS: 600 });
  }, 60_000);
  afterAll(async () => {
    await running?.stop(1000);
    await store?.close();
    // Nothing was refused by the store on the way.
    expect(logs).toEqual([]);
  });
  const subscribe = async (via: "webhook" | "websub", topic: Topic, callback: string, secret: string | null) => {
    const added = await addSubscription(
      store.db,
      { via, topic, callback, secret, client: "c1", leaseS: via === "websub" ? 86400 : null },
      100,
    );
    if (!added.ok) throw new Error("not added");
    return added.subscription;
  };

  it("a change is delivered to a webhook in the Standard Webhooks form, the body the record /api/changes gives", async () => {
    const secret = newWebhookSecret();
    const sub = await subscribe("webhook", entityTopic("alice.example"), `https://${host("a1")}/in`, secret);
    await store.record(result("alice.example", [{ id: "@alice@guild.example/m", verified: true }]));
    running = notifier(store);
    const [got] = await hooks.waitFor(at(host("a1")), 2);
    const all = hooks.received.filter(at(host("a1")));
    // The entity accepted and its credential verified: two changes, two deliveries.
    expect(all).toHaveLength(2);
    const headers = Object.fromEntries(Object.entries(got!.headers).map(([k, v]) => [k, String(v)]));
    const payload = new Webhook(secret).verify(got!.body, headers) as { id: string; domain: string; cursor: string; kind: string };
    expect(payload).toMatchObject({ domain: "alice.example", cursor: expect.stringMatching(/^p\d+$/) });
    expect(payload.id).toMatch(/^urn:uuid:/);
    expect(() => new Webhook(newWebhookSecret()).verify(got!.body, headers)).toThrow();
    await expect.poll(async () => (await deliveriesOf(store.db, sub.id)).map((r) => r.outcome)).toEqual(["delivered", "delivered"]);
    expect(new Set(all.map((r) => r.headers["webhook-id"])).size).toBe(2);
  });

  it("a WebSub callback gets the feed's new entry, signed with its hub.secret, with the hub and self links", async () => {
    await subscribe("websub", issuerTopic("guild.example"), `https://${host("ws1")}/cb?x=1`, "s3cret");
    await store.record(
      result("bob.example", [
        { id: "@bob@guild.example/m", verified: true },
        { id: "@bob@other.example/m", verified: true },
      ]),
    );
    const [got] = await hooks.waitFor(at(host("ws1")), 1);
    // Only the credential guild.example issues: the entity's own change and the other issuer's are not this feed's.
    await new Promise((r) => setTimeout(r, 500));
    expect(hooks.received.filter(at(host("ws1")))).toHaveLength(1);
    expect(got!.path).toBe("/cb?x=1");
    expect(got!.headers["x-hub-signature"]).toBe(`sha256=${createHmac("sha256", "s3cret").update(got!.body).digest("hex")}`);
    expect(got!.headers.link).toBe(`<${HUB}>; rel="hub", <${ORIGIN}/issuer/guild.example/feed.xml>; rel="self"`);
    const feed = parseFeed(got!.body);
    expect(feed.self).toBe(`${ORIGIN}/issuer/guild.example/feed.xml`);
    expect(feed.items.map((i) => i.title)).toEqual(["bob.example: Credential @bob@guild.example/m is verified"]);
  });

  it("a subscriber gets the changes committed after it began, not before", async () => {
    await store.record(result("carol.example", [{ id: "@carol@guild.example/m", verified: true }]));
    await subscribe("webhook", entityTopic("carol.example"), `https://${host("late")}/`, newWebhookSecret());
    await store.record(result("carol.example", [{ id: "@carol@guild.example/m", verified: false }]));
    const got = await hooks.waitFor(at(host("late")), 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(hooks.received.filter(at(host("late")))).toHaveLength(1);
    expect(JSON.parse(got[0]!.body)).toMatchObject({ verified: false, reason: "not_listed" });
  });

  it("a delivery sent again (its lease ran out) carries the same id, and handing out twice writes nothing twice", async () => {
    await running?.stop(1000);
    running = undefined;
    const sub = await subscribe("webhook", EVERY, "https://fail.hooks.test/", newWebhookSecret());
    await store.record(result("dave.example", []));
    expect((await fanOut(store.db)).changes).toBe(1);
    expect((await fanOut(store.db)).changes).toBe(0);
    const [first] = (await takeDue(store.db, 100, 0)).filter((d) => d.subscription.id === sub.id);
    const [again] = (await takeDue(store.db, 100, 60)).filter((d) => d.subscription.id === sub.id);
    expect(again?.id).toBe(first?.id);
    expect(again?.attempts).toBe(2);
    failing = again;
  });

  it("a failing callback is tried again with growing waits, given up after a day, and its subscription ended after a week", async () => {
    const d = failing;
    if (!d) throw new Error("no delivery");
    const created = Date.parse(d.created_at);
    expect(await markFailed(store.db, d, 500, "the callback answered HTTP 500", created + 1000)).toBe(false);
    expect((await deliveriesOf(store.db, d.subscription.id))[0]).toMatchObject({ outcome: null, status: 500 });
    expect(await markFailed(store.db, d, 500, "the callback answered HTTP 500", created + RETRY_FOR_S * 1000)).toBe(false);
    expect((await deliveriesOf(store.db, d.subscription.id))[0]).toMatchObject({ outcome: "gave_up" });
    const ended = await markFailed(store.db, d, null, "fail.hooks.test did not answer", Date.now() + FAILING_ENDS_S * 1000 + 1000);
    expect(ended).toBe(true);
    expect(await getSubscription(store.db, d.subscription.id)).toMatchObject({
      state: "ended",
      ended_reason: "every delivery failed for 7 days; the last: fail.hooks.test did not answer",
    });
  });

  it("an entity's changes past the 500 it keeps stay while a subscriber waits for them, and go once delivered", async () => {
    await running?.stop(1000);
    running = undefined;
    const count = async () =>
      Number((await store.db.query<{ n: string }>("SELECT count(*) AS n FROM changes WHERE domain = 'many.example'"))[0]?.n);
    await store.record(result("many.example", [{ id: "@many@x.example/m", verified: true }]));
    const sub = await subscribe("webhook", entityTopic("many.example"), `https://${host("many")}/`, newWebhookSecret());
    for (let i = 0; i < 510; i++) await store.record(result("many.example", [{ id: "@many@x.example/m", verified: i % 2 === 1 }]));
    // 512 changes, none delivered: none removed, handed out or not.
    expect(await count()).toBe(512);
    await fanOut(store.db, 1000);
    expect(await count()).toBe(512);
    await store.db.query("UPDATE deliveries SET outcome = 'delivered' WHERE subscription_id = $1", [sub.id]);
    await store.record(result("many.example", [{ id: "@many@x.example/m", verified: false }]));
    expect(await count()).toBe(500);
  }, 60_000);

  it("a followed entity is re-checked within the period, an entity nobody follows on its own schedule", async () => {
    await store.record(result("erin.example", [{ id: "@erin@x.example/m", verified: true }]));
    await subscribe("webhook", entityTopic("frank.example"), `https://${host("f")}/`, newWebhookSecret());
    await store.record(result("frank.example", [{ id: "@frank@x.example/m", verified: true }]));
    const rows = await store.db.query<{ domain: string; wait: number }>(
      `SELECT q.domain, extract(epoch FROM q.due_at - e.last_checked_at)::float8 AS wait
       FROM crawl_queue q JOIN entities e USING (domain) WHERE q.domain IN ('erin.example', 'frank.example') ORDER BY q.domain`,
    );
    expect(rows[0]).toMatchObject({ domain: "erin.example", wait: 86400 });
    expect(rows[1]!.wait).toBeGreaterThanOrEqual(540);
    expect(rows[1]!.wait).toBeLessThanOrEqual(600);
    // Checked again (its row in the queue is updated, not made): still within the period.
    await store.record(result("frank.example", [{ id: "@frank@x.example/m", verified: true }]));
    const [again] = await store.db.query<{ wait: number }>(
      `SELECT extract(epoch FROM q.due_at - e.last_checked_at)::float8 AS wait
       FROM crawl_queue q JOIN entities e USING (domain) WHERE q.domain = 'frank.example'`,
    );
    expect(again!.wait).toBeGreaterThanOrEqual(540);
    expect(again!.wait).toBeLessThanOrEqual(600);
  });

  // PostgreSQL's autovacuum counts them (within a minute); the embedded engine has none.
  it.runIf(name === "PGlite")("a hand-out of a thousand deliveries or more is counted for the planner at once", async () => {
    await running?.stop(1000);
    running = undefined;
    await store.db.query(
      `INSERT INTO subscriptions (id, via, topic, topic_kind, topic_domain, callback, secret, client, state, from_position)
       SELECT 'wh_crowd' || i, 'webhook', $1, 'entity', 'crowd.example', 'https://crowd' || i || '.hooks.test/', NULL, 'c1', 'active',
         (SELECT last FROM change_positions)
       FROM generate_series(1, 1200) AS i`,
      [entityTopic("crowd.example").url],
    );
    await store.record(result("crowd.example", []));
    while ((await fanOut(store.db)).changes > 0);
    // The crowd's deliveries are not this file's to send.
    await store.db.query("UPDATE subscriptions SET state = 'ended' WHERE id LIKE 'wh_crowd%'");
    const [counted] = await store.db.query<{ rows: number; subscriptions: number }>(
      `SELECT (SELECT reltuples FROM pg_class WHERE relname = 'deliveries')::float8 AS rows,
              (SELECT reltuples FROM pg_class WHERE relname = 'subscriptions')::float8 AS subscriptions`,
    );
    expect(counted!.rows).toBeGreaterThanOrEqual(1200);
    expect(counted!.subscriptions).toBeGreaterThanOrEqual(1200);
  });

  /** `db`, with the text of every statement asked through it (its transactions' too) written to `seen`. */
  const counting = (db: Db, seen: string[]): Db =>
    Object.assign(Object.create(db) as Db, {
      query: <T extends Record<string, unknown>>(sql: string, params?: unknown[]) => (seen.push(sql), db.query<T>(sql, params)),
      transaction: <T>(body: (tx: Tx) => Promise<T>) =>
        db.transaction((tx) =>
          body(
            Object.assign(Object.create(tx) as Tx, {
              query: <R extends Record<string, unknown>>(sql: string, params?: unknown[]) => (seen.push(sql), tx.query<R>(sql, params)),
            }),
          ),
        ),
    });
  const takesDue = (sql: string) => sql.includes("WITH due AS");
  const handsOut = (sql: string) => sql.includes("FROM notice_cursor FOR UPDATE");

  it("a change recorded while nobody subscribes costs the store nothing until the poll; a subscriber's is handed out at once, and due deliveries looked for only when some may be", async () => {
    const quiet = await openStore(await location(), (l) => logs.push(l));
    const seen: string[] = [];
    // No poll within the test: all it sees comes of the records and of the notifier's first look.
    const n = startNotifier({
      store: { db: counting(quiet.db, seen), onRecorded: (wake) => quiet.onRecorded(wake) },
      client: client(5000),
      websubBody,
      hubUrl: HUB,
      pollMs: 60_000,
      log: () => undefined,
    });
    /** Until the notifier has asked nothing for 300 ms: its looks, woken by what came before, are over. */
    const idle = async () => {
      for (let n = -1; n !== seen.length;) {
        n = seen.length;
        await new Promise((r) => setTimeout(r, 300));
      }
    };
    try {
      // The first look: whether anyone subscribes (nobody), and a hand-out.
      await expect
        .poll(() => seen.some((sql) => sql.includes("FROM subscriptions WHERE state = 'active'")) && seen.some(handsOut))
        .toBe(true);
      await idle();
      seen.length = 0;
      for (const d of ["q1.example", "q2.example", "q3.example"]) await quiet.record(result(d, [{ id: `@x@${d}/m`, verified: true }]));
      await idle();
      expect(seen).toEqual([]);
      // A subscription made (the app then wakes the notifier, web/notices.ts): the next change goes at once, not at the poll.
      await addSubscription(
        quiet.db,
        {
          via: "webhook",
          topic: entityTopic("q4.example"),
          callback: `https://${host("quiet")}/`,
          secret: null,
          client: "c1",
          leaseS: null,
        },
        100,
      );
      n.wake();
      await quiet.record(result("q4.example", []));
      expect(await hooks.waitFor(at(host("quiet")), 1, 3000)).toHaveLength(1);
      await expect.poll(() => n.delivered).toBe(1);
      await idle();
      // Someone subscribes, to another entity: a change of this one is handed out (none made), nothing looked for.
      seen.length = 0;
      await quiet.record(result("q5.example", []));
      await expect.poll(() => seen.some(handsOut)).toBe(true);
      await idle();
      expect(seen.filter(takesDue)).toEqual([]);
    } finally {
      await n.stop(100);
      await quiet.close();
    }
  });

  /** A notifier of its own whose deliveries count among those at once for 200 ms, to callbacks with a 5 s deadline. */
  const narrow = (atOnce: number, inFlight: number) =>
    startNotifier({
      store,
      client: client(5000),
      websubBody,
      hubUrl: HUB,
      pollMs: 100,
      log: () => undefined,
      atOnce,
      inFlight,
      waitingAfterMs: 200,
    });
  const hung = (path: string) => (r: Received) => r.method === "POST" && r.host.startsWith("hang") && r.path === path;

  it("deliveriesAtOnce: callbacks hanging on many hosts give back their room, and the others are delivered before they time out", async () => {
    await running?.stop(1000);
    running = undefined;
    for (let i = 0; i < 4; i++) await subscribe("webhook", entityTopic("stuck.example"), `https://hang${i}.hooks.test/${name}-a`, null);
    const n = narrow(2, 8);
    try {
      await store.record(result("stuck.example", []));
      expect(await hooks.waitFor(hung(`/${name}-a`), 4, 4000)).toHaveLength(4);
      // Two at once, and four hanging: without their room given back, nothing else would go for 5 s.
      for (let i = 0; i < 2; i++) await subscribe("webhook", entityTopic("moving.example"), `https://${host(`moving${i}`)}/`, null);
      await store.record(result("moving.example", []));
      const moving = (r: Received) => r.method === "POST" && r.host.startsWith(`${name.toLowerCase()}-moving`);
      expect(await hooks.waitFor(moving, 2, 4000)).toHaveLength(2);
      expect(n.failed).toBe(0);
      expect(n.running).toBeGreaterThanOrEqual(4);
    } finally {
      await n.stop(100);
    }
  });

  it("deliveriesInFlight: hanging callbacks waiting apart are bounded too; the next waits for room", async () => {
    for (let i = 0; i < 5; i++) await subscribe("webhook", entityTopic("held.example"), `https://hang${i}.hooks.test/${name}-b`, null);
    const since = Date.now();
    const hanging = () => hooks.received.filter((r) => r.at >= since && r.method === "POST" && r.host.startsWith("hang"));
    const n = narrow(2, 3);
    try {
      await store.record(result("held.example", []));
      await expect.poll(() => hanging().length, { timeout: 4000 }).toBe(3);
      // Past twice the time a delivery counts among those at once: had the bound not held, a fourth would be in.
      let most = 0;
      for (let i = 0; i < 30; i++) {
        most = Math.max(most, n.running);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(most).toBe(3);
      expect(hanging()).toHaveLength(3);
      expect(n.failed).toBe(0);
    } finally {
      await n.stop(100);
    }
  });
});

const answering =
  (...addresses: string[]) =>
  async (): Promise<LookupAddress[]> =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

describe("callbacks are strangers' addresses", () => {
  const PRIVATE = ["127.0.0.1", "10.0.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "::1", "fe80::1", "fd00:ec2::254"];
  it.each(["https://127.0.0.1/", "https://10.0.0.1/", "https://169.254.169.254/latest/meta-data/", "https://[::1]/", "https://[fd00::1]/"])(
    "an address for a callback (%s) is refused at subscribe time and at delivery",
    async (url) => {
      const c = createCallbackClient({ resolve: answering("93.184.216.34") });
      expect(await c.refuse(url)).toMatch(/^the callback must be https:\/\/ on port 443 at a domain name: .* is not a domain name$/);
      expect(await c.send(url, { method: "POST", body: "{}" })).toMatchObject({
        ok: false,
        error: expect.stringContaining("is not a domain name"),
      });
      await c.close();
    },
  );
  it.each(PRIVATE)("a name that resolves to %s is refused at subscribe time and at delivery, nothing dialled", async (address) => {
    const c = createCallbackClient({ resolve: answering(address) });
    const said = `hooks.example resolves to ${address}, which is not a public address`;
    expect(await c.refuse("https://hooks.example/in")).toBe(said);
    expect(await c.send("https://hooks.example/in", { method: "POST", body: "{}" })).toEqual({ ok: false, status: null, error: said });
    await c.close();
  });
  it("a name public at subscribe time and private at delivery (DNS rebinding) is refused at delivery", async () => {
    let answers = ["93.184.216.34"];
    const c = createCallbackClient({ resolve: async () => answers.map((address) => ({ address, family: 4 })) });
    expect(await c.refuse("https://rebind.example/")).toBeNull();
    answers = ["169.254.169.254"];
    expect(await c.send("https://rebind.example/", { method: "POST", body: "{}" })).toMatchObject({
      ok: false,
      error: "rebind.example resolves to 169.254.169.254, which is not a public address",
    });
    await c.close();
  });
  it.each([
    ["http://hooks.example/", "http: is not https:"],
    ["https://hooks.example:8443/", "port 8443 is not 443"],
    ["https://user:pw@hooks.example/", "the URL carries credentials"],
  ])("%s is refused: %s", async (url, why) => {
    const c = createCallbackClient({ resolve: answering("93.184.216.34") });
    expect(await c.refuse(url)).toBe(`the callback must be https:// on port 443 at a domain name: ${why}`);
    await c.close();
  });
});

describe("callbacks", () => {
  it("a hanging callback delays only its own deliveries", async () => {
    const c = client(3000);
    const order: string[] = [];
    const hang = c.send("https://hang.hooks.test/", { method: "POST", body: "{}" }).then((a) => (order.push("hang"), a));
    const others = Array.from({ length: 20 }, (_, i) =>
      c.send(`https://ok${i}.hooks.test/`, { method: "POST", body: "{}" }).then((a) => (order.push("ok"), a)),
    );
    const answers = await Promise.all(others);
    expect(answers.every((a) => a.ok && a.status === 204)).toBe(true);
    expect(await hang).toEqual({ ok: false, status: null, error: "hang.hooks.test did not answer within 3000 ms", timedOut: true });
    expect(order.at(-1)).toBe("hang");
    await c.close();
  });

  it("no redirect is followed: a 302 is the answer, a failure", async () => {
    const c = client();
    const before = hooks.received.filter(at("ok.hooks.test")).length;
    expect(await c.send("https://moved.hooks.test/", { method: "POST", body: "{}" })).toMatchObject({ ok: true, status: 302 });
    expect(hooks.received.filter(at("ok.hooks.test"))).toHaveLength(before);
    await c.close();
  });
});

describe.runIf(ENGINES.length > 1)("a fleet", () => {
  it("two notifiers on one PostgreSQL deliver each of 300 changes once", async () => {
    const where = await ENGINES[1]!.location("fleetnotices");
    const [a, b] = [await openStore(where, () => undefined), await openStore(where, () => undefined)];
    const added = await addSubscription(
      a.db,
      { via: "webhook", topic: EVERY, callback: "https://fleet.hooks.test/", secret: newWebhookSecret(), client: "c", leaseS: null },
      10,
    );
    expect(added.ok).toBe(true);
    const [na, nb] = [notifier(a), notifier(b)];
    for (let i = 0; i < 150; i++)
      await (i % 2 ? a : b).record(result(`fleet${i}.example`, [{ id: `@x@fleet${i}.example/m`, verified: true }]));
    const got = await hooks.waitFor(at("fleet.hooks.test"), 300, 30_000);
    await new Promise((r) => setTimeout(r, 1000));
    const ids = hooks.received.filter(at("fleet.hooks.test")).map((r) => String(r.headers["webhook-id"]));
    expect(got.length).toBe(300);
    expect(new Set(ids).size).toBe(ids.length);
    expect(na.delivered + nb.delivered).toBe(300);
    expect(na.delivered).toBeGreaterThan(0);
    expect(nb.delivered).toBeGreaterThan(0);
    await Promise.all([na.stop(1000), nb.stop(1000)]);
    await Promise.all([a.close(), b.close()]);
  }, 60_000);
});
