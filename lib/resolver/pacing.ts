/**
 * Claim checks are paced over the event loop (docs/decisions.md#outbound-work): a property's owners
 * can start thousands of checks at once, and run back to back they held the thread for tens of
 * milliseconds while every other request waited. A lookup's first 20 checks start at once (a typical
 * entity's claims, fetched together in one round trip); each later one starts on a tick of its own (an iteration of the event loop),
 * so the server reads its sockets between them, and lookups alternate among themselves: a small
 * lookup that starts behind a big one is not made to wait for all of the big one's checks.
 */

/** A later turn of the event loop: `setImmediate` where it exists (Node, Bun, Deno), else a zero timeout (a browser). */
const setImmediate: (run: () => void) => void = globalThis.setImmediate ?? ((run) => setTimeout(run, 0));

/** Each lookup's waiting pieces, first come first served; the lookups in the order their ticks come. */
const lookups = new Map<object, Array<() => void>>();
let scheduled = false;

function step() {
  const [owner, pieces] = lookups.entries().next().value ?? [];
  if (owner === undefined || pieces === undefined) {
    scheduled = false;
    return;
  }
  const next = pieces.shift();
  // The lookup goes to the back of the line, or leaves it when it has nothing more to start.
  lookups.delete(owner);
  if (pieces.length > 0) lookups.set(owner, pieces);
  // Queued from inside this tick's immediates, the next step runs on the next tick, after the sockets are read.
  if (lookups.size > 0) setImmediate(step);
  else scheduled = false;
  next?.();
}

/** The checks a lookup may start at once before it is paced. */
export const AT_ONCE = 20;
const started = new WeakMap<object, number>();

/** Null when `owner` may start its next check at once, else when it may: see nextPacedStart. */
export function pacedStart(owner: object): Promise<void> | null {
  const n = started.get(owner) ?? 0;
  started.set(owner, n + 1);
  return n < AT_ONCE && !lookups.has(owner) ? null : nextPacedStart(owner);
}

/** Resolves on a later tick of the event loop, after this lookup's earlier pieces, alternating with other lookups. */
export function nextPacedStart(owner: object): Promise<void> {
  return new Promise((resolve) => {
    const pieces = lookups.get(owner);
    if (pieces) pieces.push(resolve);
    else lookups.set(owner, [resolve]);
    if (!scheduled) {
      scheduled = true;
      setImmediate(step);
    }
  });
}

/** Pieces waiting for a tick, all lookups together (for tests). */
export const waitingPieces = () => [...lookups.values()].reduce((n, pieces) => n + pieces.length, 0);
