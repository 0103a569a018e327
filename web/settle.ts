/**
 * A streamed part of a read page settles on the server whatever happens: read pages have no client
 * runtime to swap in an error page (web/script-free.ts), so a part whose work throws (a fault, not a
 * verdict: a publisher's failure is a verdict) is said in words by the part (docs/decisions.md#cold-pages)
 * instead of leaving its placeholder for ever.
 */

/** What `orFailure` gives for work that threw. */
export const FAILED = Symbol("failed");

/** `work`'s value, or FAILED when it throws, logged as `what` failing. */
export async function orFailure<T>(work: Promise<T> | T, what: string, log: (line: string) => void): Promise<T | typeof FAILED> {
  try {
    return await work;
  } catch (err) {
    log(`page: ${what} failed: ${err instanceof Error ? err.message : String(err)}`);
    return FAILED;
  }
}
