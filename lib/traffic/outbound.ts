import { boundFor, byHoldings, createHoldings, nextOf } from "./fair.ts";
import { refusedAt, trafficSettings } from "./limits.ts";
import { isRefusal, type Refusal } from "./refusal.ts";

/** Whose work a fetch is: a person waiting for a page or an answer, or a refresh nobody waits for. */
export type Priority = "person" | "background";

export type OutboundOptions = {
  /** Fetches in flight at most (`IDENT_MAX_OUTBOUND`). @default 64 */
  max: number;
  /** Fetches waiting at most, for a slot or for their turn at a host or address; past it a fetch is refused as `busy`. @default the declared `outboundQueue` for `max` */
  maxQueued?: number;
  /** Longest wait for a fetch's turn and slot, from its start, before it is refused as `busy`, in ms. */
  maxWaitMs: number;
};

export type OutboundStats = {
  /** Fetches holding a slot. */
  active: number;
  /** Fetches waiting for a slot. */
  queued: number;
  /** Fetches entered and not yet done: active, queued, or waiting for their turn at a host or address. */
  pending: number;
  peakActive: number;
  refused: number;
};

type Waiter = { client: string; grant: () => void };

/** One fetch from its start to its end: the signal that ends its wait, once `maxWaitMs` have passed without a slot. */
export type Ticket = {
  /** Aborts, with a `busy` {@link Refusal} as its reason, when the fetch has waited `maxWaitMs` for its turn and its slot. */
  signal: AbortSignal;
  /** The fetch has its slot: its wait is over. */
  started(): void;
  /** The fetch is done. */
  leave(): void;
};

/**
 * The count of fetches entered and not yet done, against the bound of `max` in flight and
 * `maxQueued` waiting (docs/architecture.md#traffic: `outbound`, `outboundQueue`): what admission
 * reads (`full`), and the `busy` refusal past it. The outbound gate counts with it; so does the
 * page thread for the fetches it asked of the fetch thread (lib/fetch/thread.ts), whose gate holds
 * the queue.
 */
export function createOutboundCount(options: OutboundOptions) {
  const max = options.max;
  const maxQueued = options.maxQueued ?? trafficSettings({ outbound: max }).outboundQueue;
  const retryAfterS = Math.max(1, Math.ceil(options.maxWaitMs / 1000));
  let pending = 0;
  let refused = 0;
  /** Whether a new fetch would be refused now; for a lookup of a client with `inProgress` lookups already, at its part of the bound (`boundFor`). */
  const full = (inProgress = 0) => pending >= boundFor(max + maxQueued, inProgress);
  const busy = (why: string): Refusal<"busy"> => {
    refused++;
    return refusedAt("outboundQueue", `this resolver is busy (${why}); try again in ${retryAfterS} s`, retryAfterS);
  };
  return {
    max,
    maxQueued,
    /** When a refused fetch may be tried again, in seconds: its longest wait. */
    retryAfterS,
    /** Whether a new fetch would be refused now rather than queued. */
    full,
    /** The refusal `busy`, counted. */
    busy,
    /** Counts a fetch in, as the function that counts it out (once); `busy` when the bound is reached. */
    enter(): (() => void) | Refusal<"busy"> {
      if (full()) return busy(`${max} fetches in flight and ${maxQueued} waiting`);
      pending++;
      let left = false;
      return () => {
        if (left) return;
        left = true;
        pending--;
      };
    },
    /** Fetches entered and not yet done. */
    pending: () => pending,
    /** Fetches refused `busy` so far. */
    refused: () => refused,
  };
}

/**
 * The outbound cap of one instance (docs/architecture.md#traffic: `outbound`, `outboundQueue`): at most
 * `max` fetches in flight; the rest wait, a person's before background work, at most `maxQueued` of
 * them (counting those still waiting for their turn at a host name or address), each at most
 * `maxWaitMs` for a slot. Past either, the refusal `busy`: never a publisher's failure. Among a
 * person's fetches, the next slot goes to the client with the fewest fetches in flight or waiting
 * (docs/architecture.md#fair-queues).
 */
export function createOutboundGate(options: OutboundOptions) {
  const count = createOutboundCount(options);
  const holdings = createHoldings();
  const o: Outbound = {
    max: count.max,
    queues: { person: [], background: [] },
    slots: { active: 0, queued: 0, peakActive: 0 },
    holdings,
    weight: byHoldings(holdings),
  };
  return {
    /** Fetches in flight at most. */
    max: o.max,
    /** When a refused fetch may be tried again, in seconds: its longest wait. */
    retryAfterS: count.retryAfterS,
    /**
     * Counts a fetch from its start to its end, as its ticket; `busy` when `max` are in flight and
     * `maxQueued` more are waiting, wherever they wait.
     */
    enter: (): Ticket | Refusal<"busy"> => enter(count, options.maxWaitMs),
    /**
     * A slot for a fetch of `client`, as the function that gives it back; waits in the queue when none
     * is free, until `signal` aborts (rejecting with its reason).
     */
    acquire: (priority: Priority, signal?: AbortSignal, client = ""): Promise<() => void> => acquire(o, priority, signal, client),
    /** Whether a new fetch would be refused now rather than queued. */
    full: count.full,
    stats: (): OutboundStats => ({
      active: o.slots.active,
      queued: o.slots.queued,
      pending: count.pending(),
      peakActive: o.slots.peakActive,
      refused: count.refused(),
    }),
  };
}

/** What a gate keeps: its slots, the queues of a person's and of background fetches, each client's holdings. */
type Outbound = {
  max: number;
  queues: Record<Priority, Waiter[]>;
  slots: { active: number; queued: number; peakActive: number };
  holdings: ReturnType<typeof createHoldings>;
  weight: ReturnType<typeof byHoldings>;
};

/** A fetch counted from its start to its end, aborted as `busy` when it waits longer than `maxWaitMs` for its slot. */
function enter(count: ReturnType<typeof createOutboundCount>, maxWaitMs: number): Ticket | Refusal<"busy"> {
  const leave = count.enter();
  if (isRefusal(leave)) return leave;
  const waiting = new AbortController();
  const timer = setTimeout(() => waiting.abort(count.busy(`no fetch slot within ${maxWaitMs} ms`)), maxWaitMs);
  return {
    signal: waiting.signal,
    started: () => clearTimeout(timer),
    leave: () => {
      clearTimeout(timer);
      leave();
    },
  };
}

/** Gives a slot back: to the next waiter, a person's (the lightest client's) before background work, or to the pool. */
function handOn(o: Outbound) {
  const queue = o.queues.person.length > 0 ? o.queues.person : o.queues.background;
  const at = nextOf(queue, o.weight);
  const next = at >= 0 ? queue.splice(at, 1)[0] : undefined;
  if (!next) return void o.slots.active--;
  o.slots.queued--;
  next.grant(); // the slot passes on: `active` is unchanged
}

/** The function that gives `client`'s slot back, once. */
function slot(o: Outbound, client: string): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    o.holdings.remove(client);
    handOn(o);
  };
}

function acquire(o: Outbound, priority: Priority, signal: AbortSignal | undefined, client: string): Promise<() => void> {
  const { slots, holdings, queues } = o;
  if (slots.active < o.max) {
    slots.active++;
    slots.peakActive = Math.max(slots.peakActive, slots.active);
    holdings.add(client);
    return Promise.resolve(slot(o, client));
  }
  if (signal?.aborted) return Promise.reject(signal.reason);
  holdings.add(client);
  return new Promise((resolve, reject) => {
    const giveUp = () => {
      const queue = queues[priority];
      const at = queue.indexOf(waiter);
      if (at >= 0) queue.splice(at, 1);
      slots.queued--;
      holdings.remove(client);
      reject(signal?.reason);
    };
    const waiter: Waiter = {
      client,
      grant: () => {
        signal?.removeEventListener("abort", giveUp);
        resolve(slot(o, client));
      },
    };
    signal?.addEventListener("abort", giveUp, { once: true });
    queues[priority].push(waiter);
    slots.queued++;
  });
}

export type OutboundGate = ReturnType<typeof createOutboundGate>;
