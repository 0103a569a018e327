/**
 * A failure that says nothing about the document, only about its publisher now (docs/decisions.md#caching,
 * docs/decisions.md#the-index): no answer in time, no connection, or an answer of 429 or 5xx. A
 * background refresh that ends in one keeps the document it had; a claim whose re-check ends in one
 * keeps its verdict, marked stale. The one definition, for the cache, the fleet's and the index.
 */
export function isTransientFailure(failure: { status: string; httpStatus?: number | null }): boolean {
  if (failure.status === "timeout" || failure.status === "unreachable") return true;
  const http = failure.httpStatus ?? null;
  return failure.status === "not_found" && http !== null && (http === 429 || http >= 500);
}
