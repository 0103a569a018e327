import { refusedAt, trafficSettings } from "./limits";
import { isRefusal, type Refusal } from "./refusal";

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

type Waiter = { grant: () => void };

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
  const full = () => pending >= max + maxQueued;
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
 * `maxWaitMs` for a slot. Past either, the refusal `busy`: never a publisher's failure.
 */
export function createOutboundGate(options: OutboundOptions) {
  const count = createOutboundCount(options);
  const max = count.max;
  const queues: Record<Priority, Waiter[]> = { person: [], background: [] };
  const slots = { active: 0, queued: 0, peakActive: 0 };

  /** Gives a slot back: to the first waiter, a person's before background work, or to the pool. */
  function handOn() {
    const next = queues.person.shift() ?? queues.background.shift();
    if (!next) return void slots.active--;
    slots.queued--;
    next.grant(); // the slot passes on: `active` is unchanged
  }

  function slot(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      handOn();
    };
  }

  return {
    /** Fetches in flight at most. */
    max,
    /** When a refused fetch may be tried again, in seconds: its longest wait. */
    retryAfterS: count.retryAfterS,
    /**
     * Counts a fetch from its start to its end, as its ticket; `busy` when `max` are in flight and
     * `maxQueued` more are waiting, wherever they wait.
     */
    enter(): Ticket | Refusal<"busy"> {
      const leave = count.enter();
      if (isRefusal(leave)) return leave;
      const waiting = new AbortController();
      const timer = setTimeout(() => waiting.abort(count.busy(`no fetch slot within ${options.maxWaitMs} ms`)), options.maxWaitMs);
      return {
        signal: waiting.signal,
        started: () => clearTimeout(timer),
        leave: () => {
          clearTimeout(timer);
          leave();
        },
      };
    },
    /** A slot, as the function that gives it back; waits in the queue when none is free, until `signal` aborts (rejecting with its reason). */
    acquire(priority: Priority, signal?: AbortSignal): Promise<() => void> {
      if (slots.active < max) {
        slots.active++;
        slots.peakActive = Math.max(slots.peakActive, slots.active);
        return Promise.resolve(slot());
      }
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise((resolve, reject) => {
        const giveUp = () => {
          const queue = queues[priority];
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          slots.queued--;
          reject(signal?.reason);
        };
        const waiter: Waiter = {
          grant: () => {
            signal?.removeEventListener("abort", giveUp);
            resolve(slot());
          },
        };
        signal?.addEventListener("abort", giveUp, { once: true });
        queues[priority].push(waiter);
        slots.queued++;
      });
    },
    /** Whether a new fetch would be refused now rather than queued. */
    full: count.full,
    stats: (): OutboundStats => ({
      active: slots.active,
      queued: slots.queued,
      pending: count.pending(),
      peakActive: slots.peakActive,
      refused: count.refused(),
    }),
  };
}

export type OutboundGate = ReturnType<typeof createOutboundGate>;
