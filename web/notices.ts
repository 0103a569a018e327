/**
 * Following a feed (docs/notices.md): the webhooks of `/api/webhooks` (Standard Webhooks) and the
 * WebSub hub at `/hub` (W3C WebSub). Both take one of the three feeds as their topic, check the
 * callback before anything is kept (docs/notices.md#callbacks), count against the client's
 * `subscribesPerMinute` and `subscriptionsPerClient`, and bring the topic's entities' next checks
 * within the follow period (docs/notices.md#looking-by-itself). Answered without Next, as the API is.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { parseQuery } from "ident-resolver";
import type { Logger } from "ident-resolver/setup";
import type { ConfiguredResolver } from "ident-resolver/setup";
import {
  addSubscription,
  deliveriesOf,
  endSubscription,
  follow,
  getSubscription,
  heldBy,
  holdersOf,
  queueTest,
  websubOf,
  type Store,
  type Subscription,
  type Topic,
} from "ident-resolver/store";
import { newWebhookSecret, sameSecret, verifyIntent, type CallbackClient } from "ident-resolver/notify";
import { refusedAt, type LimitName, type Refusal } from "ident-resolver/traffic";
import { currentClient, type AdmissionDeps } from "./admission";
import { CORS_HEADERS, rateLimitHeaders } from "./api-headers";
import { NewWebhook } from "./api-schemas";
import { refusalAnswer, unavailableAnswer, type RefusalAnswer } from "./refusal-answer";
import { requestContext } from "./request-context";
import { bodyOf } from "./request-body";
import { send } from "./response";
import { WEBHOOK_BODY_BYTES, HUB_BODY_BYTES, type Route } from "./routes";

export type NoticesDeps = Pick<AdmissionDeps, "clientOf"> & {
  resolver: Pick<ConfiguredResolver, "store" | "traffic">;
  /** `IDENT_PUBLIC_URL`: the feeds' URLs, which are the topics. */
  publicUrl: string;
  callbacks: CallbackClient;
  log: Logger;
  /** Wakes the notifier (a test delivery was queued). */
  wake(): void;
};

export type Notices = { serve(req: IncomingMessage, res: ServerResponse, route: Route): void };

/** WebSub's lease (docs/notices.md#websub): asked for within these bounds, 10 days when not asked. */
export const LEASE = { minS: 3600, defaultS: 10 * 24 * 3600, maxS: 30 * 24 * 3600 } as const;
/** WebSub §5.1: a `hub.secret` is shorter than 200 bytes. */
const MAX_HUB_SECRET_BYTES = 199;

const JSON_HEADERS = Object.assign({}, CORS_HEADERS, {
  "Access-Control-Expose-Headers": `${CORS_HEADERS["Access-Control-Expose-Headers"] ?? ""}, Location`,
  "Content-Type": "application/json",
  "Cache-Control": "no-store",
});
const WEBHOOK_METHODS = "GET, HEAD, POST, DELETE, OPTIONS";

/**
 * The topic a URL names (docs/notices.md#topics): `/changes.xml`, `/entity/{domain}/feed.xml` or
 * `/issuer/{domain}/feed.xml` of this resolver, absolute or as a path; else why not.
 */
export function topicOf(text: string, publicUrl: string): Topic | string {
  const origin = new URL(publicUrl).origin;
  let url: URL;
  try {
    url = new URL(text, origin);
  } catch {
    return "the topic is not a URL";
  }
  const not = `the topic must be one of this resolver's feeds: ${origin}/changes.xml, ${origin}/entity/{domain}/feed.xml or ${origin}/issuer/{domain}/feed.xml`;
  if (url.origin !== origin || url.search !== "" || url.hash !== "") return not;
  if (url.pathname === "/changes.xml") return { url: url.href, kind: "changes", domain: null };
  const m = /^\/(entity|issuer)\/([^/]+)\/feed\.xml$/.exec(url.pathname);
  if (!m?.[1] || !m[2]) return not;
  let raw: string;
  try {
    raw = decodeURIComponent(m[2]);
  } catch {
    return not;
  }
  const parsed = parseQuery(raw);
  if (!parsed.ok || parsed.query.kind !== "domain") return `${JSON.stringify(raw)} is not a domain`;
  const kind = m[1] === "entity" ? "entity" : "issuer";
  return { url: `${origin}/${kind}/${parsed.query.domain}/feed.xml`, kind, domain: parsed.query.domain };
}

/** A webhook as its owner reads it (docs/api.md#webhooks). */
export function webhookView(s: Subscription) {
  return {
    id: s.id,
    url: s.callback,
    topic: s.topic,
    state: s.state,
    ended_reason: s.ended_reason,
    created_at: s.created_at,
    failing_since: s.failing_since,
  };
}

/** An answer of the webhooks' API or the hub in JSON, or one already written (`made`: the index failing, web/refusal-answer.ts). */
type Reply = { status: number; json: unknown; headers?: Record<string, string> } | { made: RefusalAnswer };
const error = (status: number, code: string, message: string, headers: Record<string, string> = {}): Reply => ({
  status,
  json: { error: { code, message } },
  headers,
});
/** One answer for a missing, unknown or wrongly authorised webhook: nobody learns whether an id exists. */
const NO_SUCH = error(404, "not_found", "No webhook has this id and secret (Authorization: Bearer whsec_…).");

export function createNotices(deps: NoticesDeps): Notices {
  return {
    serve(req, res, route) {
      const client = currentClient(deps);
      const reply = async (r: Reply, api: boolean) => {
        if ("made" in r) return send(req, res, { status: r.made.status, headers: r.made.headers, body: r.made.body });
        const limits = api ? await rateLimitHeaders(deps.resolver.traffic.windows, client).catch(() => ({})) : {};
        send(req, res, {
          status: r.status,
          headers: Object.assign({}, JSON_HEADERS, limits, r.headers ?? {}),
          body: JSON.stringify(r.json),
        });
      };
      const answer = route.kind === "hub" ? hub(deps, req, client) : webhooks(deps, req, route, client);
      answer.then(
        (r) => {
          if (r === null) return;
          if ("refused" in r) {
            const a = refusalAnswer(route.row.profile, r, {});
            return send(req, res, { status: a.status, headers: a.headers, body: a.body });
          }
          return reply(r, route.kind !== "hub");
        },
        (err: unknown) => {
          deps.log.error(`notices: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
          void reply(error(500, "unavailable", "This resolver could not answer; try again shortly."), false);
        },
      );
    },
  };
}

/** The client's turn at a per-minute limit; the refusal past it. */
async function taken(deps: NoticesDeps, limit: LimitName & "subscribesPerMinute", client: string): Promise<Refusal | null> {
  const decided = await deps.resolver.traffic.windows[limit].take(client);
  if (decided.ok) return null;
  const n = deps.resolver.traffic.settings[limit];
  return refusedAt(
    limit,
    `you have made, tested or deleted ${n} subscriptions this minute, as many as one client may; try again in ${decided.retryAfterS} s`,
    decided.retryAfterS,
  );
}

const full = (deps: NoticesDeps, held: number): Refusal =>
  refusedAt(
    "subscriptionsPerClient",
    `you hold ${held} subscriptions, as many as one client may (${deps.resolver.traffic.settings.subscriptionsPerClient}); delete one first`,
    60,
  );

async function storeOf(deps: NoticesDeps): Promise<Store | Reply> {
  const store = await deps.resolver.store;
  if (store) return store;
  const profile = requestContext()?.route.row.profile ?? "api";
  return { made: unavailableAnswer(profile, "no index", "The index is not available on this server; nothing can be followed.") };
}

/** Brings the checks of the topic's entities within the follow period (docs/notices.md#looking-by-itself); never fails the request. */
async function followTopic(deps: NoticesDeps, store: Store, topic: Topic): Promise<void> {
  if (topic.domain === null) return;
  const domain = topic.domain;
  try {
    const domains = topic.kind === "entity" ? [domain] : await holdersOf(store.db, domain);
    await store.db.transaction((tx) => follow(tx, domains, store.followS));
  } catch (err) {
    deps.log.warn(`notices: the entities of ${topic.url} were not scheduled: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** `/api/webhooks`, `/api/webhooks/{id}` and `/api/webhooks/{id}/test` (docs/api.md#webhooks). */
async function webhooks(deps: NoticesDeps, req: IncomingMessage, route: Route, client: string): Promise<Reply | Refusal | null> {
  const method = req.method ?? "GET";
  if (method === "OPTIONS") {
    return {
      status: 204,
      json: null,
      headers: {
        "Access-Control-Allow-Methods": WEBHOOK_METHODS,
        "Access-Control-Allow-Headers": "Content-Type, Authorization",
        "Access-Control-Max-Age": "86400",
      },
    };
  }
  const allowed = route.row.methods.filter((m) => m !== "OPTIONS");
  if (!route.row.methods.includes(method)) {
    return error(405, "invalid_request", `This address answers ${allowed.join(", ")} only.`, { Allow: route.row.methods.join(", ") });
  }
  const store = await storeOf(deps);
  if (!("db" in store)) return store;
  if (route.kind === "api:webhooks") return createWebhook(deps, store, req, client);
  let id: string;
  try {
    id = decodeURIComponent(route.path.split("/")[3] ?? "");
  } catch {
    return NO_SUCH;
  }
  const found = await getSubscription(store.db, id);
  const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
  if (!found || found.via !== "webhook" || !sameSecret(auth, found.secret)) return NO_SUCH;
  if (method === "GET" || method === "HEAD") {
    return { status: 200, json: Object.assign(webhookView(found), { deliveries: await deliveriesOf(store.db, found.id) }) };
  }
  const refused = await taken(deps, "subscribesPerMinute", client);
  if (refused) return refused;
  if (route.kind === "api:webhook-test") {
    if (found.state !== "active")
      return error(409, "invalid_request", `This webhook has ended: ${found.ended_reason ?? "it was deleted"}.`);
    const delivery = await queueTest(store.db, found.id);
    deps.wake();
    return { status: 202, json: { delivery } };
  }
  await endSubscription(store.db, found.id, "deleted by its owner");
  return { status: 204, json: null };
}

async function createWebhook(deps: NoticesDeps, store: Store, req: IncomingMessage, client: string): Promise<Reply | Refusal> {
  if (!/^application\/json\b/i.test(req.headers["content-type"] ?? "")) {
    return error(415, "invalid_request", 'Send the webhook as JSON (Content-Type: application/json): { "url": …, "topic": … }.');
  }
  const text = await bodyOf(req, WEBHOOK_BODY_BYTES);
  if (text === null) return error(413, "invalid_request", `The body is too large: this address reads at most ${WEBHOOK_BODY_BYTES} bytes.`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return error(400, "invalid_request", "The body is not JSON.");
  }
  const parsed = NewWebhook.safeParse(raw);
  if (!parsed.success) {
    return error(400, "invalid_request", 'The body must be { "url": "https://…", "topic": "<a feed of this resolver>" } and nothing else.');
  }
  const topic = topicOf(parsed.data.topic, deps.publicUrl);
  if (typeof topic === "string") return error(400, "invalid_request", `${topic}.`);
  const refused = await taken(deps, "subscribesPerMinute", client);
  if (refused) return refused;
  const bad = await deps.callbacks.refuse(parsed.data.url);
  if (bad) return error(400, "invalid_request", `${bad}.`);
  const secret = newWebhookSecret();
  const added = await addSubscription(
    store.db,
    { via: "webhook", topic, callback: parsed.data.url, secret, client, leaseS: null },
    deps.resolver.traffic.settings.subscriptionsPerClient,
  );
  if (!added.ok) return full(deps, added.held);
  // The notifier hands out this instance's changes at once only while someone subscribes (lib/notify/notifier.ts).
  deps.wake();
  await followTopic(deps, store, topic);
  const self = `/api/webhooks/${added.subscription.id}`;
  return { status: 201, json: Object.assign(webhookView(added.subscription), { secret }), headers: { Location: self } };
}

/** `POST /hub` (W3C WebSub §5.1): 202 and a verification of intent, or 4xx saying why not. */
async function hub(deps: NoticesDeps, req: IncomingMessage, client: string): Promise<Reply | Refusal> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers["content-type"] ?? "")) {
    return error(415, "invalid_request", "A hub request is a form (Content-Type: application/x-www-form-urlencoded).");
  }
  const text = await bodyOf(req, HUB_BODY_BYTES);
  if (text === null) return error(413, "invalid_request", `The form is too large: the hub reads at most ${HUB_BODY_BYTES} bytes.`);
  const form = new URLSearchParams(text);
  const mode = form.get("hub.mode");
  if (mode !== "subscribe" && mode !== "unsubscribe") return error(400, "invalid_request", "hub.mode must be subscribe or unsubscribe.");
  const topic = topicOf(form.get("hub.topic") ?? "", deps.publicUrl);
  if (typeof topic === "string") return error(400, "invalid_request", `hub.topic: ${topic}.`);
  const callback = form.get("hub.callback") ?? "";
  const secret = form.get("hub.secret");
  if (secret !== null && (secret === "" || Buffer.byteLength(secret) > MAX_HUB_SECRET_BYTES)) {
    return error(400, "invalid_request", `hub.secret must be 1 to ${MAX_HUB_SECRET_BYTES} bytes.`);
  }
  const asked = form.get("hub.lease_seconds");
  if (asked !== null && !/^\d{1,10}$/.test(asked))
    return error(400, "invalid_request", "hub.lease_seconds must be a whole number of seconds.");
  const leaseS = Math.min(LEASE.maxS, Math.max(LEASE.minS, asked === null ? LEASE.defaultS : Number(asked)));
  const refused = await taken(deps, "subscribesPerMinute", client);
  if (refused) return refused;
  const bad = await deps.callbacks.refuse(callback);
  if (bad) return error(400, "invalid_request", `hub.callback: ${bad}.`);
  const store = await storeOf(deps);
  if (!("db" in store)) return store;
  const existing = await websubOf(store.db, topic.url, callback);
  if (mode === "subscribe" && !existing) {
    const held = await heldBy(store.db, client);
    if (held >= deps.resolver.traffic.settings.subscriptionsPerClient) return full(deps, held);
  }
  // The intent is verified after this answer (§5.3): the callback may be asked before it has read it.
  void verified(deps, store, { mode, topic, callback, secret, leaseS, client });
  return { status: 202, json: { accepted: `the hub will ask ${new URL(callback).hostname} to confirm (hub.challenge)` } };
}

type HubIntent = {
  mode: "subscribe" | "unsubscribe";
  topic: Topic;
  callback: string;
  secret: string | null;
  leaseS: number;
  client: string;
};

/** Verifies the intent with the callback, then subscribes or unsubscribes; what fails is logged, never thrown. */
async function verified(deps: NoticesDeps, store: Store, i: HubIntent): Promise<void> {
  try {
    const why = await verifyIntent(deps.callbacks, { mode: i.mode, topic: i.topic.url, callback: i.callback, leaseS: i.leaseS });
    if (why !== null) return deps.log.info(`hub: the ${i.mode} of ${i.callback} to ${i.topic.url} was not verified: ${why}`);
    if (i.mode === "unsubscribe") {
      const existing = await websubOf(store.db, i.topic.url, i.callback);
      if (existing) await endSubscription(store.db, existing.id, "unsubscribed by its callback");
      return;
    }
    const added = await addSubscription(
      store.db,
      { via: "websub", topic: i.topic, callback: i.callback, secret: i.secret, client: i.client, leaseS: i.leaseS },
      deps.resolver.traffic.settings.subscriptionsPerClient,
    );
    if (!added.ok) return;
    deps.wake();
    await followTopic(deps, store, i.topic);
  } catch (err) {
    deps.log.warn(`hub: the ${i.mode} of ${i.callback} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}
