/**
 * The one rule of every queue a request waits in (docs/architecture.md#fair-queues): the next to go
 * is the waiter of the client holding the fewest places in that queue (running or waiting), the
 * earliest among equals; a full queue that must refuse someone refuses the newest waiter of the
 * client holding the most, and never a client lighter than the newcomer. A client that asks one
 * thing at a time is then served next, however many others keep several in flight.
 */

/** A waiter, and whose it is. */
export type Waiting = { client: string };

/** A waiter's weight: the places its client holds, then what breaks a tie (lower goes first). */
export type Weight<W extends Waiting = Waiting> = (waiter: W) => readonly [held: number, tie: number];

const heavier = (a: readonly [number, number], b: readonly [number, number]) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

/** The places each client holds in one queue, running and waiting. */
export function createHoldings() {
  const held = new Map<string, number>();
  return {
    of: (client: string): number => held.get(client) ?? 0,
    add(client: string): void {
      held.set(client, (held.get(client) ?? 0) + 1);
    },
    remove(client: string): void {
      const n = (held.get(client) ?? 1) - 1;
      if (n > 0) held.set(client, n);
      else held.delete(client);
    },
    /** Clients holding a place. */
    clients: (): number => held.size,
  };
}

export type Holdings = ReturnType<typeof createHoldings>;

/** A weight from holdings alone, with no tie-break but the order of arrival. */
export const byHoldings =
  (holdings: Holdings): Weight =>
  (waiter) => [holdings.of(waiter.client), 0];

/** Where the next to go waits in `queue`: the lightest client's waiter, the earliest among equals; -1 when none waits. */
export function nextOf<W extends Waiting>(queue: readonly W[], weight: Weight<W>): number {
  let best = -1;
  let bestWeight: readonly [number, number] = [Infinity, Infinity];
  queue.forEach((w, i) => {
    const it = weight(w);
    if (heavier(bestWeight, it)) [best, bestWeight] = [i, it];
  });
  return best;
}

/**
 * Where the waiter to refuse for a newcomer of weight `newcomer` waits: the newest waiter of the
 * heaviest client, when that client is heavier than the newcomer; -1 when none is (the newcomer is
 * then the one refused).
 */
export function refusedFor<W extends Waiting>(queue: readonly W[], weight: Weight<W>, newcomer: readonly [number, number]): number {
  let worst = -1;
  let worstWeight = newcomer;
  queue.forEach((w, i) => {
    const it = weight(w);
    if (heavier(it, worstWeight) || (worst >= 0 && !heavier(worstWeight, it))) [worst, worstWeight] = [i, it];
  });
  return worst;
}

/**
 * The part of a shared bound a client may fill (docs/architecture.md#fair-queues): one with nothing
 * in progress, the whole of it; one with something in progress already, all but a quarter, which is
 * kept for the clients that have nothing. A crowd that fills the instance then meets its refusals
 * first, while a client asking one thing at a time still gets in.
 */
export function boundFor(bound: number, inProgress: number): number {
  return inProgress === 0 ? bound : bound - Math.max(1, Math.floor(bound / 4));
}
