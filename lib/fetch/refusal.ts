/**
 * Work this resolver declined or could not do (docs/decisions.md#outbound-work). It is never a
 * publisher's failure: it is thrown, not returned as a fetch outcome, so the cache never keeps it and
 * no result reports it as the publisher's.
 */
/** The kinds of work this resolver declines or cannot do. */
export const REFUSAL_KINDS = [
  /** The query has started all the fetches it may (`IDENT_MAX_FETCHES_PER_QUERY`). */
  "query_budget",
  /** The target host has had its requests for this minute (`IDENT_HOST_BUDGET_PER_MIN`). */
  "host_budget",
  /** Every outbound slot is taken and the queue is full, or the wait for a slot was too long (`IDENT_MAX_OUTBOUND`). */
  "busy",
  /** A fault of this machine: out of file descriptors, memory or buffers. */
  "local_fault",
] as const;
export type RefusalKind = (typeof REFUSAL_KINDS)[number];

/** Marks a NotFetched whichever copy of this module made it (Next may bundle it more than once). */
const BRAND = Symbol.for("ident-resolver.NotFetched");

export class NotFetched extends Error {
  readonly [BRAND] = true;

  /** `instanceof` holds for a NotFetched from another copy of this module too. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  constructor(
    readonly kind: RefusalKind,
    message: string,
    /** When asking again may succeed, in seconds. */
    readonly retryAfterS: number,
  ) {
    // No stack: a refusal is expected, says all in its message, and a 50-owner property query makes
    // thousands of them, whose stacks cost the page thread 50 ms.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = "NotFetched";
  }
}

/** Error codes of this machine's own faults, never the publisher's. */
export const LOCAL_FAULTS: ReadonlySet<string> = new Set(["EMFILE", "ENFILE", "ENOMEM", "ENOBUFS"]);
