import { createHoldings, nextOf, type Holdings, type Weight } from "./fair.ts";

/** One key's tasks: how many run, each client's places (running or waiting), and the waiters. */
type Line = { active: number; holdings: Holdings; waiting: Waiter[] };
type Waiter = { client: string; since: number; turn: () => void };

/**
 * A waiter kept this long goes before every newer one (docs/architecture.md#fair-queues): a stream of
 * lighter clients never keeps a heavier client's task waiting for ever (the records at the index's
 * engine wait with no deadline of their own).
 */
export const WAITED_LONG_MS = 10_000;

/** Fewest places first, the earliest among equals; a waiter kept past `WAITED_LONG_MS` before them all, the oldest first. */
const turnOf =
  (holdings: Holdings, now: number): Weight<Waiter> =>
  (w) =>
    now - w.since >= WAITED_LONG_MS ? [-1, w.since] : [holdings.of(w.client), 0];

/**
 * At most `max` tasks per key at a time; the rest wait (docs/architecture.md#traffic): the fetches to
 * one host name (`hostAtOnce`) and to one IP address (`addressAtOnce`). The wait is fair
 * (docs/architecture.md#fair-queues): the next to run is the waiter of the client with the fewest
 * tasks at that key, the earliest among equals, so a crowd's fetches to one address do not hold up
 * another client's; and one kept `WAITED_LONG_MS` goes first, so none waits for ever.
 */
export function createAtOnceLimiter(max: number) {
  const lines = new Map<string, Line>();

  function release(key: string, line: Line, client: string) {
    line.holdings.remove(client);
    const at = nextOf(line.waiting, turnOf(line.holdings, Date.now()));
    if (at >= 0) return line.waiting.splice(at, 1)[0]?.turn();
    if (--line.active === 0) lines.delete(key);
  }

  /**
   * Runs `task` in its turn, for `client` (whose other tasks at this key make it wait behind lighter
   * clients); a `signal` that aborts while it waits takes it out of the queue, with the signal's reason.
   */
  async function run<T>(name: string, task: () => Promise<T>, signal?: AbortSignal, client = ""): Promise<T> {
    const key = name.toLowerCase();
    let line = lines.get(key);
    if (!line) lines.set(key, (line = { active: 0, holdings: createHoldings(), waiting: [] }));
    const mine = line;
    if (mine.active < max) {
      mine.active++;
      mine.holdings.add(client);
    } else {
      signal?.throwIfAborted();
      mine.holdings.add(client);
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          client,
          since: Date.now(),
          turn: () => {
            signal?.removeEventListener("abort", giveUp);
            resolve();
          },
        };
        const giveUp = () => {
          const at = mine.waiting.indexOf(waiter);
          if (at >= 0) mine.waiting.splice(at, 1);
          mine.holdings.remove(client);
          reject(signal?.reason);
        };
        signal?.addEventListener("abort", giveUp, { once: true });
        mine.waiting.push(waiter);
      });
    }
    try {
      return await task();
    } finally {
      release(key, mine, client);
    }
  }

  /** Tasks running or waiting for `name`. */
  const load = (name: string) => {
    const line = lines.get(name.toLowerCase());
    return line ? line.active + line.waiting.length : 0;
  };

  return Object.assign(run, { load });
}
