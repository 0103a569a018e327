/**
 * At most `max` tasks per host at a time (docs/decisions.md#budget: 6 fetches to one host); the rest wait in order.
 */
export function createHostLimiter(max: number) {
  const active = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();

  function release(host: string) {
    const next = waiting.get(host)?.shift();
    if (next) return next();
    const n = (active.get(host) ?? 1) - 1;
    if (n === 0) {
      active.delete(host);
      waiting.delete(host);
    } else active.set(host, n);
  }

  return async function run<T>(host: string, task: () => Promise<T>): Promise<T> {
    const key = host.toLowerCase();
    const n = active.get(key) ?? 0;
    if (n < max) active.set(key, n + 1);
    else {
      const queue = waiting.get(key) ?? [];
      waiting.set(key, queue);
      await new Promise<void>((resolve) => queue.push(resolve));
    }
    try {
      return await task();
    } finally {
      release(key);
    }
  };
}
