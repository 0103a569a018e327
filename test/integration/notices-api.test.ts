/**
 * Following a feed over HTTP (docs/notices.md, docs/api.md#webhooks): the webhooks API and the WebSub
 * hub as the server answers them (web/notices.ts behind the route table), on the embedded index, with
 * real HTTPS callbacks on loopback (test/network/hooks.ts, a subscriber that follows WebSub §5.3).
 * Webhook deliveries are verified by the `standardwebhooks` package, receivers' own.
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EntityResult } from "ident-resolver";
import { openStore, type Store } from "ident-resolver/store";
import { createCallbackClient, startNotifier, type CallbackClient, type Notifier } from "ident-resolver/notify";
import { createWindows, trafficSettings, type TrafficSettings } from "ident-resolver/traffic";
import { atomFeed } from "../../web/feeds";
import { createNotices } from "../../web/notices";
import { classify } from "../../web/routes";
import { credentialCheck } from "../helpers/checks";
import { newEmbeddedDir } from "../helpers/engines";
import { scratchDir } from "../helpers/scratch";
import { startHooks, type Hooks, type Received } from "../network/hooks";

const PUBLIC = "https://ident.example";
let clock = Date.parse("2026-07-01T08:00:00.000Z");
const checked = (domain: string, verified: boolean): EntityResult =>
  credentialCheck(domain, [{ id: `@${domain.split(".")[0]}@guild.example/m`, verified }], new Date((clock += 60_000)).toISOString());

let hooks: Hooks;
let store: Store;
let callbacks: CallbackClient;
let notifier: Notifier;
const servers: Server[] = [];

/** A server answering the notices' routes as the app's does, with these limits. */
async function serve(settings: Partial<TrafficSettings> = {}, client = "client-1"): Promise<string> {
  const traffic = trafficSettings(Object.assign({ subscribesPerMinute: 1000, subscriptionsPerClient: 1000 }, settings));
  const notices = createNotices({
    resolver: { store: Promise.resolve(store), traffic: { settings: traffic, windows: createWindows(traffic) } as never },
    clientOf: () => client,
    publicUrl: PUBLIC,
    callbacks,
    log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    wake: () => notifier.wake(),
  });
  const server = createServer((req, res) => notices.serve(req, res, classify(req.method ?? "GET", req.url ?? "/")));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  hooks = await startHooks();
  store = await openStore({ kind: "embedded", dataDir: newEmbeddedDir(scratchDir("ident-notices-api-")) }, () => undefined);
  callbacks = createCallbackClient({ connectTo: hooks.connectTo, ca: [hooks.caPem], timeoutMs: 3000 });
  const websubBody = (sub: { topic: string }, change: Parameters<typeof atomFeed>[0][number]) =>
    atomFeed([change], {
      self: sub.topic,
      page: PUBLIC,
      title: "t",
      since: change.at,
      entityPage: (d) => `${PUBLIC}/entity/${d}`,
      hub: `${PUBLIC}/hub`,
    });
  notifier = startNotifier({ store, client: callbacks, websubBody, hubUrl: `${PUBLIC}/hub`, pollMs: 100, log: () => undefined });
}, 60_000);
afterAll(async () => {
  for (const s of servers) s.close();
  await notifier?.stop(1000);
  await callbacks?.close();
  await store?.close();
  await hooks?.close();
});

const posts = (host: string) => (r: Received) => r.host === host && r.method === "POST";
const createHook = (base: string, body: unknown, type = "application/json") =>
  fetch(`${base}/api/webhooks`, {
    method: "POST",
    headers: { "content-type": type },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const headersOf = (r: Received) => Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));

describe("webhooks (docs/api.md#webhooks)", () => {
  let base: string;
  beforeAll(async () => {
    base = await serve();
  });

  it("POST /api/webhooks: 201 with the webhook, its whsec_ secret and its Location; the secret alone reads it", async () => {
    const made = await createHook(base, { url: "https://w1.hooks.test/in", topic: "/entity/alice.example/feed.xml" });
    expect(made.status).toBe(201);
    const hook = (await made.json()) as { id: string; secret: string; topic: string; state: string };
    expect(hook).toMatchObject({ topic: `${PUBLIC}/entity/alice.example/feed.xml`, state: "active", url: "https://w1.hooks.test/in" });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(made.headers.get("location")).toBe(`/api/webhooks/${hook.id}`);
    const read = (auth?: string) => fetch(`${base}/api/webhooks/${hook.id}`, auth ? { headers: { authorization: auth } } : {});
    expect((await read(`Bearer ${hook.secret}`)).status).toBe(200);
    const wrong = await read("Bearer whsec_AAAA");
    expect(wrong.status).toBe(404);
    expect((await read()).status).toBe(404);
    // The same answer for an id that does not exist: nobody learns which do.
    const none = await fetch(`${base}/api/webhooks/wh_nothing`, { headers: { authorization: `Bearer ${hook.secret}` } });
    expect(await none.json()).toEqual(await wrong.json());
    // A path that is not percent-encoded UTF-8 names no webhook either.
    expect((await fetch(`${base}/api/webhooks/%E0%A4%A`, { headers: { authorization: `Bearer ${hook.secret}` } })).status).toBe(404);
    expect(made.headers.get("access-control-expose-headers")).toContain("Location");
  });

  it("a test delivery and a change arrive signed (standardwebhooks verifies them); the owner sees them; after DELETE nothing more", async () => {
    const hook = (await (
      await createHook(base, { url: "https://w2.hooks.test/in", topic: `${PUBLIC}/entity/bob.example/feed.xml` })
    ).json()) as {
      id: string;
      secret: string;
    };
    const auth = { authorization: `Bearer ${hook.secret}` };
    const test = await fetch(`${base}/api/webhooks/${hook.id}/test`, { method: "POST", headers: auth });
    expect(test.status).toBe(202);
    const [first] = await hooks.waitFor(posts("w2.hooks.test"), 1);
    expect(new Webhook(hook.secret).verify(first!.body, headersOf(first!))).toMatchObject({
      schema: "ident-resolver/webhook-test@1",
      subscription: hook.id,
    });
    await store.record(checked("bob.example", true));
    const got = await hooks.waitFor(posts("w2.hooks.test"), 3);
    const change = new Webhook(hook.secret).verify(got[2]!.body, headersOf(got[2]!)) as { domain: string; kind: string };
    expect(change).toMatchObject({ domain: "bob.example" });
    await expect
      .poll(
        async () =>
          ((await (await fetch(`${base}/api/webhooks/${hook.id}`, { headers: auth })).json()) as { deliveries: unknown[] }).deliveries
            .length,
      )
      .toBe(3);
    const seen = (await (await fetch(`${base}/api/webhooks/${hook.id}`, { headers: auth })).json()) as {
      deliveries: { outcome: string; status: number }[];
    };
    expect(seen.deliveries.every((d) => d.outcome === "delivered" && d.status === 204)).toBe(true);
    expect((await fetch(`${base}/api/webhooks/${hook.id}`, { method: "DELETE", headers: auth })).status).toBe(204);
    const ended = (await (await fetch(`${base}/api/webhooks/${hook.id}`, { headers: auth })).json()) as {
      state: string;
      ended_reason: string;
    };
    expect(ended).toMatchObject({ state: "ended", ended_reason: "deleted by its owner" });
    await store.record(checked("bob.example", false));
    await new Promise((r) => setTimeout(r, 800));
    expect(hooks.received.filter(posts("w2.hooks.test"))).toHaveLength(3);
    expect((await fetch(`${base}/api/webhooks/${hook.id}/test`, { method: "POST", headers: auth })).status).toBe(409);
  });

  it.each([
    ["not JSON", "{", "application/json", 400, "The body is not JSON."],
    ["a field too many", { url: "https://a.hooks.test/", topic: "/changes.xml", x: 1 }, "application/json", 400, "and nothing else"],
    ["a form", "url=x", "application/x-www-form-urlencoded", 415, "Send the webhook as JSON"],
    [
      "another site's feed",
      { url: "https://a.hooks.test/", topic: "https://elsewhere.example/changes.xml" },
      "application/json",
      400,
      "the topic must be one of this resolver's feeds",
    ],
    [
      "a page that is no feed",
      { url: "https://a.hooks.test/", topic: "/entity/alice.example" },
      "application/json",
      400,
      "the topic must be one of",
    ],
    ["an http callback", { url: "http://a.hooks.test/", topic: "/changes.xml" }, "application/json", 400, "http: is not https:"],
    [
      "a callback at an address",
      { url: "https://169.254.169.254/", topic: "/changes.xml" },
      "application/json",
      400,
      "169.254.169.254 is not a domain name",
    ],
  ])("%s is refused in words", async (_, body, type, status, words) => {
    const answer = await createHook(base, body, type);
    expect(answer.status).toBe(status);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toContain(words);
  });

  it("a preflight names the methods and headers the webhooks take", async () => {
    const answer = await fetch(`${base}/api/webhooks`, { method: "OPTIONS" });
    expect(answer.status).toBe(204);
    expect(answer.headers.get("access-control-allow-methods")).toBe("GET, HEAD, POST, DELETE, OPTIONS");
    expect(answer.headers.get("access-control-allow-headers")).toBe("Content-Type, Authorization");
  });
});

describe("limits (docs/architecture.md#traffic)", () => {
  it("subscriptionsPerClient: past the subscriptions one client may hold, 429 `subscriptions`", async () => {
    const base = await serve({ subscriptionsPerClient: 2 }, "client-held");
    for (let i = 0; i < 2; i++)
      expect((await createHook(base, { url: `https://held${i}.hooks.test/`, topic: "/changes.xml" })).status).toBe(201);
    const third = await createHook(base, { url: "https://held3.hooks.test/", topic: "/changes.xml" });
    expect(third.status).toBe(429);
    expect(await third.json()).toMatchObject({ error: { code: "rate_limited" } });
    expect(JSON.stringify(await (await createHook(base, { url: "https://held3.hooks.test/", topic: "/changes.xml" })).json())).toContain(
      "subscriptions",
    );
  });
  it("subscribesPerMinute: past a client's minute, 429 `subscribes` with Retry-After", async () => {
    const base = await serve({ subscribesPerMinute: 2 }, "client-minute");
    for (let i = 0; i < 2; i++)
      expect((await createHook(base, { url: `https://m${i}.hooks.test/`, topic: "/changes.xml" })).status).toBe(201);
    const over = await createHook(base, { url: "https://m3.hooks.test/", topic: "/changes.xml" });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(JSON.stringify(await over.json())).toContain("subscribes");
  });
});

describe("the WebSub hub (docs/notices.md#websub)", () => {
  let base: string;
  beforeAll(async () => {
    base = await serve();
  });
  const hubAsk = (form: Record<string, string>) =>
    fetch(`${base}/hub`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form),
    });
  const topic = `${PUBLIC}/entity/carol.example/feed.xml`;

  it("subscribe: 202, the intent verified with a hub.challenge, then each change POSTed with X-Hub-Signature; unsubscribe verified too", async () => {
    const answer = await hubAsk({
      "hub.mode": "subscribe",
      "hub.topic": topic,
      "hub.callback": "https://sub.hooks.test/cb?feed=1",
      "hub.secret": "k",
      "hub.lease_seconds": "60",
    });
    expect(answer.status).toBe(202);
    const [verification] = await hooks.waitFor((r) => r.host === "sub.hooks.test" && r.method === "GET", 1);
    const asked = new URL(verification!.path, "https://x").searchParams;
    expect(asked.get("feed")).toBe("1");
    expect(asked.get("hub.mode")).toBe("subscribe");
    expect(asked.get("hub.topic")).toBe(topic);
    expect(asked.get("hub.challenge")).toMatch(/^[A-Za-z0-9_-]{32}$/);
    // A lease shorter than an hour is given an hour.
    expect(asked.get("hub.lease_seconds")).toBe("3600");
    await new Promise((r) => setTimeout(r, 300));
    await store.record(checked("carol.example", true));
    const [delivered] = await hooks.waitFor(posts("sub.hooks.test"), 1);
    expect(delivered!.headers["x-hub-signature"]).toBe(`sha256=${createHmac("sha256", "k").update(delivered!.body).digest("hex")}`);
    expect(delivered!.headers["content-type"]).toBe("application/atom+xml; charset=utf-8");
    expect(delivered!.body).toContain("<entry>");
    const gone = await hubAsk({ "hub.mode": "unsubscribe", "hub.topic": topic, "hub.callback": "https://sub.hooks.test/cb?feed=1" });
    expect(gone.status).toBe(202);
    await hooks.waitFor((r) => r.host === "sub.hooks.test" && r.method === "GET", 2);
    await new Promise((r) => setTimeout(r, 300));
    const before = hooks.received.filter(posts("sub.hooks.test")).length;
    await store.record(checked("carol.example", false));
    await new Promise((r) => setTimeout(r, 800));
    expect(hooks.received.filter(posts("sub.hooks.test"))).toHaveLength(before);
  });

  it("a callback that does not echo the challenge is not subscribed", async () => {
    expect((await hubAsk({ "hub.mode": "subscribe", "hub.topic": topic, "hub.callback": "https://deny.hooks.test/" })).status).toBe(202);
    await hooks.waitFor((r) => r.host === "deny.hooks.test", 1);
    await new Promise((r) => setTimeout(r, 300));
    await store.record(checked("carol.example", true));
    await new Promise((r) => setTimeout(r, 800));
    expect(hooks.received.filter(posts("deny.hooks.test"))).toHaveLength(0);
  });

  it.each([
    [{ "hub.mode": "publish" }, "hub.mode must be subscribe or unsubscribe"],
    [
      { "hub.mode": "subscribe", "hub.topic": "https://elsewhere.example/feed", "hub.callback": "https://a.hooks.test/" },
      "hub.topic: the topic must be one of",
    ],
    [
      { "hub.mode": "subscribe", "hub.topic": "/changes.xml", "hub.callback": "https://127.0.0.1/" },
      "hub.callback: the callback must be https:// on port 443 at a domain name",
    ],
    [
      { "hub.mode": "subscribe", "hub.topic": "/changes.xml", "hub.callback": "https://a.hooks.test/", "hub.secret": "x".repeat(200) },
      "hub.secret must be 1 to 199 bytes",
    ],
    [
      { "hub.mode": "subscribe", "hub.topic": "/changes.xml", "hub.callback": "https://a.hooks.test/", "hub.lease_seconds": "-1" },
      "hub.lease_seconds",
    ],
  ])("%j is refused with 400, saying why", async (form, words) => {
    const answer = await hubAsk(form as Record<string, string>);
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toContain(words);
  });
});
