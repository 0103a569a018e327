/** The value of `promise` if it settles before the next macrotask (everything it needs is cached), else null. */
export function settledNow<T>(promise: Promise<T>): Promise<T | null> {
  return Promise.race([promise, new Promise<null>((resolve) => setImmediate(() => resolve(null)))]);
}
