/**
 * At most `max` tasks per key at a time; the rest wait in order (docs/architecture.md#traffic): the
 * fetches to one host name (`hostAtOnce`) and to one IP address (`addressAtOnce`).
 */
export function createAtOnceLimiter(max: number) {
  const active = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();

  function release(key: string) {
    const next = waiting.get(key)?.shift();
    if (next) return next();
    const n = (active.get(key) ?? 1) - 1;
    if (n === 0) {
      active.delete(key);
      waiting.delete(key);
    } else active.set(key, n);
  }

  /** Runs `task` in its turn; a `signal` that aborts while it waits takes it out of the queue, with the signal's reason. */
  async function run<T>(name: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const key = name.toLowerCase();
    const n = active.get(key) ?? 0;
    if (n < max) active.set(key, n + 1);
    else {
      signal?.throwIfAborted();
      const queue = waiting.get(key) ?? [];
      waiting.set(key, queue);
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          signal?.removeEventListener("abort", giveUp);
          resolve();
        };
        const giveUp = () => {
          const at = queue.indexOf(turn);
          if (at >= 0) queue.splice(at, 1);
          reject(signal?.reason);
        };
        signal?.addEventListener("abort", giveUp, { once: true });
        queue.push(turn);
      });
    }
    try {
      return await task();
    } finally {
      release(key);
    }
  }

  /** Tasks running or waiting for `name`. */
  const load = (name: string) => {
    const key = name.toLowerCase();
    return (active.get(key) ?? 0) + (waiting.get(key)?.length ?? 0);
  };

  return Object.assign(run, { load });
}
