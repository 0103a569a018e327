import { trafficSettings } from "./limits";
import { refusal, type Refusal } from "./refusal";

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
 * The outbound cap of one instance (docs/architecture.md#traffic: `outbound`, `outboundQueue`): at most
 * `max` fetches in flight; the rest wait, a person's before background work, at most `maxQueued` of
 * them (counting those still waiting for their turn at a host name or address), each at most
 * `maxWaitMs` for a slot. Past either, the refusal `busy`: never a publisher's failure.
 */
export function createOutboundGate(options: OutboundOptions) {
  const max = options.max;
  const maxQueued = options.maxQueued ?? trafficSettings({ outbound: max }).outboundQueue;
  const queues: Record<Priority, Waiter[]> = { person: [], background: [] };
  const stats: OutboundStats = { active: 0, queued: 0, pending: 0, peakActive: 0, refused: 0 };
  const retryAfterS = Math.max(1, Math.ceil(options.maxWaitMs / 1000));

  const busy = (why: string): Refusal<"busy"> => {
    stats.refused++;
    return refusal("busy", `this resolver is busy (${why}); try again in ${retryAfterS} s`, retryAfterS);
  };

  /** Gives a slot back: to the first waiter, a person's before background work, or to the pool. */
  function handOn() {
    const next = queues.person.shift() ?? queues.background.shift();
    if (!next) return void stats.active--;
    stats.queued--;
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
    retryAfterS,
    /**
     * Counts a fetch from its start to its end, as its ticket; `busy` when `max` are in flight and
     * `maxQueued` more are waiting, wherever they wait.
     */
    enter(): Ticket | Refusal<"busy"> {
      if (stats.pending >= max + maxQueued) return busy(`${max} fetches in flight and ${maxQueued} waiting`);
      stats.pending++;
      const waiting = new AbortController();
      const timer = setTimeout(() => waiting.abort(busy(`no fetch slot within ${options.maxWaitMs} ms`)), options.maxWaitMs);
      let left = false;
      return {
        signal: waiting.signal,
        started: () => clearTimeout(timer),
        leave: () => {
          clearTimeout(timer);
          if (left) return;
          left = true;
          stats.pending--;
        },
      };
    },
    /** A slot, as the function that gives it back; waits in the queue when none is free, until `signal` aborts (rejecting with its reason). */
    acquire(priority: Priority, signal?: AbortSignal): Promise<() => void> {
      if (stats.active < max) {
        stats.active++;
        stats.peakActive = Math.max(stats.peakActive, stats.active);
        return Promise.resolve(slot());
      }
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise((resolve, reject) => {
        const giveUp = () => {
          const queue = queues[priority];
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          stats.queued--;
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
        stats.queued++;
      });
    },
    /** Whether a new fetch would be refused now rather than queued. */
    full: () => stats.pending >= max + maxQueued,
    stats: (): OutboundStats => ({ ...stats }),
  };
}

export type OutboundGate = ReturnType<typeof createOutboundGate>;
