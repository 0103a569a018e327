/**
 * Work this resolver declines or cannot do now (docs/architecture.md#traffic): a value, carried in
 * results beside fetch outcomes, never an exception. It is never a publisher's failure: the cache never
 * keeps it, and a claim it stops is reported `not_checked`, not failed.
 */

/** Refusals a fetch can meet: a claim stopped by one carries it as `not_checked`. */
export const FETCH_REFUSALS = [
  /** The query has started all the fetches it may (`IDENT_MAX_FETCHES_PER_QUERY`). */
  "query_budget",
  /** The target host name has had its requests for this minute (`IDENT_HOST_BUDGET_PER_MIN`). */
  "host_budget",
  /** The target IP address has had its requests for this minute (`IDENT_ADDRESS_BUDGET_PER_MIN`). */
  "address_budget",
  /** This client has had its share (a quarter) of the target host name's or address's minute. */
  "client_share",
  /** Every outbound slot is taken and the queue is full, or the wait for a slot was too long (`IDENT_MAX_OUTBOUND`). */
  "busy",
  /** A fault of this machine: out of file descriptors, memory or buffers. */
  "local_fault",
] as const;

/** Every refusal: a fetch's, and a client's limits, met before any work starts. */
export const REFUSAL_KINDS = [
  ...FETCH_REFUSALS,
  /** The client has started its lookups that fetch for this minute (`IDENT_COLD_LOOKUPS_PER_MIN`). */
  "cold_lookups",
  /** The client has had its `?refresh=1` and re-checks for this minute. */
  "refreshes",
  /** The client has as many lookups in progress as one client may. */
  "lookups_in_progress",
  /** The client has as many connections open as one client may (`IDENT_MAX_CONNECTIONS_PER_CLIENT`): closed, never answered. */
  "connections",
  /** The client has searched the index as often as one client may this minute (`IDENT_SEARCHES_PER_MIN`). */
  "searches",
  /** The client has as many searches of the index in progress as one client may. */
  "searches_in_progress",
  /** This instance is running as many searches of its index as it may, with a full queue. */
  "search_busy",
  /** The client has read the index (badges, feeds, searches, changes) as often as one client may this minute (`IDENT_STORE_READS_PER_MIN`). */
  "store_reads",
  /** The client holds as many webhooks and WebSub subscriptions as one client may (`IDENT_SUBSCRIPTIONS_PER_CLIENT`). */
  "subscriptions",
  /** The client has made, tested or deleted subscriptions as often as one client may this minute (`IDENT_SUBSCRIBES_PER_MIN`). */
  "subscribes",
] as const;

export type FetchRefusalKind = (typeof FETCH_REFUSALS)[number];
export type RefusalKind = (typeof REFUSAL_KINDS)[number];

/** A refusal: which limit, when asking again may succeed, and why in plain words (lower case, no full stop). */
export type Refusal<K extends RefusalKind = RefusalKind> = { refused: K; retryAfterS: number; message: string };
export type FetchRefusal = Refusal<FetchRefusalKind>;

export const refusal = <K extends RefusalKind>(refused: K, message: string, retryAfterS: number): Refusal<K> => ({
  refused,
  retryAfterS: Math.max(0, Math.ceil(retryAfterS)),
  message,
});

/** Whether a value is a refusal (results are told from refusals by this field alone). */
export function isRefusal(value: unknown): value is Refusal {
  return typeof value === "object" && value !== null && typeof (value as { refused?: unknown }).refused === "string";
}

/** Error codes of this machine's own faults, never the publisher's. */
export const LOCAL_FAULTS: ReadonlySet<string> = new Set(["EMFILE", "ENFILE", "ENOMEM", "ENOBUFS"]);
