/**
 * The notifier (docs/notices.md#delivery): in each instance, hands out the changes recorded past the
 * fleet's cursor (lib/store/notices.ts `fanOut`, one instance at a time) and sends the deliveries due,
 * each under a lease, through the guarded callback client. It looks when this instance records a
 * change, and every `pollMs` for what other instances recorded and for retries that came due. A look
 * asks the store only what can have changed since the last (docs/notices.md#delivery): a change
 * recorded while no subscription is active waits for the poll, and the deliveries due are looked for
 * only when some may be.
 */
import { changesAnswer, type PlacedChange } from "../store/overview.ts";
import type { Store } from "../store/index.ts";
import {
  anySubscribed,
  endSubscription,
  fanOut,
  giveUp,
  markDelivered,
  markFailed,
  pruneNotices,
  releaseLeases,
  takeDue,
  type DueDelivery,
  type Subscription,
} from "../store/notices.ts";
import { LIMITS } from "../traffic/limits.ts";
import type { CallbackClient } from "./callbacks.ts";
import { hubSignature, webhookHeaders } from "./sign.ts";

/** The body a webhook's test delivery carries (`POST /api/webhooks/{id}/test`). */
export const WEBHOOK_TEST_SCHEMA = "ident-resolver/webhook-test@1";

export type NotifierOptions = {
  store: Pick<Store, "db" | "onRecorded">;
  client: CallbackClient;
  /** WebSub's body for a change: the topic's Atom feed holding its entry (the app writes Atom, web/feeds.ts). */
  websubBody(subscription: Subscription, change: PlacedChange): string;
  /** The hub's absolute URL, for each WebSub delivery's `Link` header. */
  hubUrl: string;
  log?: (line: string) => void;
  /** How often the store is looked at when nothing wakes the notifier. @default 1000 */
  pollMs?: number;
  /** Deliveries sent at once, each counted until its callback has had `WAITING_AFTER_MS` (`deliveriesAtOnce`). */
  atOnce?: number;
  /** Deliveries in flight, those waiting on a callback that has not answered included (`deliveriesInFlight`). */
  inFlight?: number;
  /** How long a delivery counts among those at once before it waits apart. @default WAITING_AFTER_MS */
  waitingAfterMs?: number;
  /** Deliveries to one callback host at once (`callbackHostAtOnce`); one for a while after it did not answer in time. */
  hostAtOnce?: number;
  /** Told of each delivery's end (tests and the bench time them). */
  settled?: (d: DueDelivery, outcome: "delivered" | "failed") => void;
};

export type Notifier = {
  /** Looks at the store now. */
  wake(): void;
  /** Deliveries being sent now. */
  readonly running: number;
  readonly delivered: number;
  readonly failed: number;
  /** Stops taking deliveries and waits for those being sent, at most `graceMs`. */
  stop(graceMs?: number): Promise<void>;
};

type NotifierState = {
  o: NotifierOptions;
  log: (line: string) => void;
  atOnce: number;
  inFlight: number;
  sending: Set<Promise<void>>;
  /** Deliveries in `sending` whose callback has not yet had `WAITING_AFTER_MS`: those `atOnce` bounds. */
  counted: number;
  delivered: number;
  failed: number;
  stopped: boolean;
  looking: Promise<void> | null;
  again: boolean;
  unreadable: boolean;
  timer: NodeJS.Timeout | null;
  lastPrune: number;
  /** Something may have been recorded since the last hand-out (this instance recorded, or the poll came round). */
  handOut: boolean;
  /** The poll came round: this look hands out whatever the other fields say, and asks whether anyone subscribes. */
  polled: boolean;
  /** Whether a subscription was active when last asked (each poll), or has been made since (`wake`). */
  subscribed: boolean;
  /** Told of a subscription since the poll's question was asked: its answer may predate it. */
  told: boolean;
  /** Whether a delivery may be due that the last look did not take (cleared by a look that took none). */
  maybeDue: boolean;
  /** Deliveries in flight by callback host. */
  hosts: Map<string, number>;
  /** Hosts that let a delivery run to its deadline, until when they get one at a time. */
  slow: Map<string, number>;
};

/** How long a callback host that did not answer in time gets one delivery at a time. */
const SLOW_FOR_MS = 5 * 60_000;
/**
 * docs/notices.md#callbacks: a delivery whose callback has not answered within this long gives back its
 * room among those at once (`deliveriesAtOnce`) and keeps its place among those in flight
 * (`deliveriesInFlight`). What a delivery costs (a handshake, its request) is spent by then; waiting
 * holds a socket. So hanging callbacks on many hosts do not hold up the others' deliveries.
 */
const WAITING_AFTER_MS = 2000;

const PRUNE_EVERY_MS = 3600_000;
/** Hand-out batches per look: a backlog is handed out over several looks, each short. */
const BATCHES_PER_LOOK = 20;

export function startNotifier(o: NotifierOptions): Notifier {
  const state: NotifierState = {
    o,
    log: o.log ?? console.error,
    atOnce: o.atOnce ?? LIMITS.deliveriesAtOnce.default,
    inFlight: o.inFlight ?? LIMITS.deliveriesInFlight.default,
    sending: new Set(),
    counted: 0,
    delivered: 0,
    failed: 0,
    stopped: false,
    looking: null,
    again: false,
    unreadable: false,
    timer: null,
    lastPrune: Date.now(),
    handOut: true,
    polled: false,
    subscribed: true,
    told: false,
    maybeDue: true,
    hosts: new Map(),
    slow: new Map(),
  };
  const unhook = o.store.onRecorded(() => {
    state.handOut = true;
    wake(state);
  });
  // The embedded engine's folder is this process's alone: a lease found now is a dead process's.
  const released = o.store.db.engine === "pglite" ? releaseLeases(o.store.db).catch(() => 0) : Promise.resolve(0);
  void released.then((n) => {
    if (n > 0) state.log(`notices: ${n} deliveries taken before a restart are sent again`);
    tick(state);
  });
  return {
    // Told from outside: a subscription was made or a test delivery queued.
    wake: () => {
      state.subscribed = true;
      state.told = true;
      state.maybeDue = true;
      wake(state);
    },
    get running() {
      return state.sending.size;
    },
    get delivered() {
      return state.delivered;
    },
    get failed() {
      return state.failed;
    },
    async stop(graceMs = 5000) {
      state.stopped = true;
      unhook();
      if (state.timer) clearTimeout(state.timer);
      await state.looking;
      let t: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...state.sending]), new Promise((r) => (t = setTimeout(r, graceMs)))]);
      clearTimeout(t);
    },
  };
}

function tick(state: NotifierState): void {
  // Each poll hands out too, and looks for what is due: other instances' changes and deliveries, and
  // retries that came due, are seen here.
  state.handOut = true;
  state.polled = true;
  state.maybeDue = true;
  wake(state);
  if (!state.stopped) state.timer = setTimeout(() => tick(state), state.o.pollMs ?? 1000).unref();
}

/** One look at a time; a wake during a look makes one more. */
function wake(state: NotifierState): void {
  if (state.stopped) return;
  if (state.looking) {
    state.again = true;
    return;
  }
  state.looking = look(state)
    .catch((err: unknown) => {
      // Said once per outage (docs/deploying.md#when-a-part-fails): the deliveries wait in the database.
      if (!state.unreadable)
        state.log(`notices: the store could not be read: ${err instanceof Error ? err.message : String(err)}; deliveries wait`);
      state.unreadable = true;
    })
    .finally(() => {
      state.looking = null;
      if (state.again) {
        state.again = false;
        wake(state);
      }
    });
}

/** Hands out what was recorded, then starts as many due deliveries as there is room for. */
async function look(state: NotifierState): Promise<void> {
  const { db } = state.o.store;
  const polled = state.polled;
  state.polled = false;
  if (polled) {
    state.told = false;
    const yes = await anySubscribed(db);
    state.subscribed = yes || state.told;
  }
  // A delivery's end wakes a look to send the next; it hands out only when something may have been
  // recorded, and, but for the poll, only when someone subscribes: with nobody, a change makes no
  // delivery, and this instance's cold pages would each pay for a hand-out and a look for nothing.
  if (state.handOut && (polled || state.subscribed)) {
    state.handOut = false;
    let i = 0;
    while (i < BATCHES_PER_LOOK && !state.stopped) {
      const out = await fanOut(db);
      // Deliveries made: someone subscribes (made on another instance since the poll asked, maybe).
      if (out.made > 0) {
        state.maybeDue = true;
        state.subscribed = true;
      }
      if (out.changes === 0) break;
      i++;
    }
    // A backlog longer than one look's batches is handed out by the next look.
    if (i === BATCHES_PER_LOOK) state.handOut = true;
  }
  if (Date.now() - state.lastPrune > PRUNE_EVERY_MS) {
    state.lastPrune = Date.now();
    await pruneNotices(db);
  }
  if (state.unreadable) state.log("notices: the store can be read again; deliveries resume");
  state.unreadable = false;
  const free = Math.min(state.atOnce - state.counted, state.inFlight - state.sending.size);
  // With nobody subscribed nothing can be due (a delivery goes to an active subscription only).
  if (state.stopped || free <= 0 || !state.maybeDue || !state.subscribed) return;
  const perHost = state.o.hostAtOnce ?? LIMITS.callbackHostAtOnce.default;
  // Cleared before asking, so that a reason to look again found meanwhile (a delivery's end) stands.
  state.maybeDue = false;
  const due = await takeDue(db, free, undefined, busyHosts(state, perHost), perHost).catch((err: unknown) => {
    state.maybeDue = true;
    throw err;
  });
  // Some taken: more may be due (rows given up or held elsewhere leave an answer short of its room),
  // and the next look asks again. None: nothing is due now but to busy hosts, whose deliveries'
  // ends wake a look of their own, and what comes due later, which the poll finds.
  if (due.length > 0) state.maybeDue = true;
  for (const d of due) start(state, d);
}

/** Sends `d`, counted among those at once until its callback has had `WAITING_AFTER_MS`, and in flight until it ends. */
function start(state: NotifierState, d: DueDelivery): void {
  const host = hostOf(d.subscription.callback);
  state.hosts.set(host, (state.hosts.get(host) ?? 0) + 1);
  state.counted++;
  let waiting = false;
  const timer = setTimeout(() => {
    waiting = true;
    state.counted--;
    state.maybeDue = true;
    wake(state);
  }, state.o.waitingAfterMs ?? WAITING_AFTER_MS).unref();
  const job = send(state, d).finally(() => {
    clearTimeout(timer);
    if (!waiting) state.counted--;
    const left = (state.hosts.get(host) ?? 1) - 1;
    if (left > 0) state.hosts.set(host, left);
    else state.hosts.delete(host);
    state.sending.delete(job);
    state.maybeDue = true;
    wake(state);
  });
  state.sending.add(job);
}

const hostOf = (callback: string): string => {
  try {
    return new URL(callback).hostname.toLowerCase();
  } catch {
    return "";
  }
};

/** The hosts with as many deliveries in flight as they may have: one for a host lately slow, `perHost` for the others. */
function busyHosts(state: NotifierState, perHost: number): string[] {
  const now = Date.now();
  for (const [host, until] of state.slow) if (until < now) state.slow.delete(host);
  return [...state.hosts].filter(([host, n]) => n >= (state.slow.has(host) ? 1 : perHost)).map(([host]) => host);
}

/** The body and headers of one attempt at `d` (docs/notices.md#what-is-sent). */
export function render(d: DueDelivery, hubUrl: string, websubBody: NotifierOptions["websubBody"], nowS: number) {
  const sub = d.subscription;
  if (sub.via === "websub") {
    if (d.change === null) return null;
    const body = websubBody(sub, d.change);
    const headers: Record<string, string> = {
      "content-type": "application/atom+xml; charset=utf-8",
      link: `<${hubUrl}>; rel="hub", <${sub.topic}>; rel="self"`,
    };
    if (sub.secret !== null) headers["x-hub-signature"] = hubSignature(sub.secret, body);
    return { headers, body };
  }
  const body = JSON.stringify(
    d.change === null
      ? { schema: WEBHOOK_TEST_SCHEMA, subscription: sub.id, topic: sub.topic, sent_at: new Date(nowS * 1000).toISOString() }
      : changesAnswer({ changes: [d.change], more: false }).changes[0],
  );
  const headers = Object.assign({ "content-type": "application/json" }, webhookHeaders(sub.secret ?? "", d.id, nowS, body));
  return { headers, body };
}

/** Sends one delivery and records how it went; never throws. */
async function send(state: NotifierState, d: DueDelivery): Promise<void> {
  const { o } = state;
  const { db } = o.store;
  try {
    const made = render(d, o.hubUrl, o.websubBody, Math.floor(Date.now() / 1000));
    if (made === null) return await giveUp(db, d.id, "a WebSub subscription has no test delivery");
    const answer = await o.client.send(d.subscription.callback, { method: "POST", headers: made.headers, body: made.body });
    if (answer.ok && answer.status >= 200 && answer.status <= 299) {
      await markDelivered(db, d, answer.status);
      state.delivered++;
      o.settled?.(d, "delivered");
      return;
    }
    const error = answer.ok ? `the callback answered HTTP ${answer.status}` : answer.error;
    if (!answer.ok && answer.timedOut) state.slow.set(hostOf(d.subscription.callback), Date.now() + SLOW_FOR_MS);
    await markFailed(db, d, answer.ok ? answer.status : null, error);
    // Standard Webhooks: 410 Gone asks the sender to stop.
    if (answer.ok && answer.status === 410) await endSubscription(db, d.subscription.id, "the callback answered 410 Gone");
    state.failed++;
    o.settled?.(d, "failed");
  } catch (err) {
    // The store refused the outcome: the lease runs out and the delivery is sent again, with its id.
    state.log(`notices: the delivery ${d.id} was not recorded: ${err instanceof Error ? err.message : String(err)}`);
  }
}
