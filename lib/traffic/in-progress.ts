/**
 * Requests in progress, refused rather than queued past their limits (docs/architecture.md#traffic:
 * `requestsInInstance`, `lookupsInInstance`, `lookupsInProgress`): a count per key, entered and left.
 */
export function createInProgress() {
  const counts = new Map<string, number>();
  const count = (key: string) => counts.get(key) ?? 0;
  return {
    count,
    /** Counts one for each key until the function it returns is called (once). */
    enter(keys: readonly string[]): () => void {
      for (const key of keys) counts.set(key, count(key) + 1);
      let left = false;
      return () => {
        if (left) return;
        left = true;
        for (const key of keys) {
          const n = count(key) - 1;
          if (n <= 0) counts.delete(key);
          else counts.set(key, n);
        }
      };
    },
    /** Keys with something in progress (for the tests: nothing leaks). */
    get size() {
      return counts.size;
    },
  };
}

export type InProgress = ReturnType<typeof createInProgress>;
