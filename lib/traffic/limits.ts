/**
 * Every traffic limit, declared once as data (docs/architecture.md#traffic): what it counts, how
 * many, over what, the variable that sets it and its default, and the refusal a client meets at it.
 * The configuration reads its variables from here, the limiters are built from here, and the docs'
 * table of limits is checked against here by a test.
 */
import { refusal, type Refusal, type RefusalKind } from "./refusal.ts";

/** What a limit counts against. */
export type Counted = "client" | "host name" | "address" | "client at one host name" | "client at one address" | "query" | "instance";

export type LimitDeclaration = {
  counts: Counted;
  /**
   * `at once`: running together; `minute`: in any 60 s; `10 s`: in any 10 s; `query`: started by one
   * lookup; `waiting`: queued together.
   */
  per: "at once" | "minute" | "10 s" | "query" | "waiting";
  /** The default; for a derived limit, the value at the other limits' defaults. */
  default: number;
  /** The environment variable that sets it, with its range; none for a fixed or derived limit. */
  variable: { name: `IDENT_${string}`; min: number; max: number } | null;
  /** A limit that follows another (named in {@link LIMITS}): `fraction` of it, at least `atLeast`. */
  derived?: { from: string; fraction: number; atLeast: number };
  /**
   * A per-minute limit on requests this resolver sends: each is counted a minute and the fetch
   * deadline (`IDENT_FETCH_TIMEOUT_MS`) from when it is spent. A request reaches the publisher within
   * its deadline of its spend, if ever, so the publisher never sees more than the limit in any minute.
   */
  countsSends?: true;
  /** Counted in Redis for the whole fleet when `IDENT_REDIS_URL` is set; else per instance. */
  fleet: boolean;
  /** The refusal at the limit. */
  refused: RefusalKind;
  /** What happens at the limit, in words (docs/architecture.md's table). */
  reached: string;
};

export const LIMITS = {
  outbound: {
    counts: "instance",
    per: "at once",
    default: 64,
    variable: { name: "IDENT_MAX_OUTBOUND", min: 1, max: 10_000 },
    fleet: false,
    refused: "busy",
    reached: "the fetch waits for a slot, a person's before background work, the client with the fewest fetches first",
  },
  outboundQueue: {
    counts: "instance",
    per: "waiting",
    default: 256,
    variable: null,
    derived: { from: "outbound", fraction: 4, atLeast: 1 },
    fleet: false,
    refused: "busy",
    reached: "503 with Retry-After (a quarter sooner for a client with lookups in progress); a claim is `not_checked`",
  },
  hostAtOnce: {
    counts: "host name",
    per: "at once",
    default: 6,
    variable: null,
    fleet: false,
    refused: "busy",
    reached: "the fetch waits its turn, the client with the fewest there first (503 only past the outbound wait)",
  },
  addressAtOnce: {
    counts: "address",
    per: "at once",
    default: 32,
    variable: null,
    fleet: false,
    refused: "busy",
    reached: "the fetch waits its turn, the client with the fewest there first (503 only past the outbound wait)",
  },
  addressPerMinute: {
    counts: "address",
    per: "minute",
    default: 1_200,
    variable: { name: "IDENT_ADDRESS_BUDGET_PER_MIN", min: 1, max: 1_000_000 },
    countsSends: true,
    fleet: true,
    refused: "address_budget",
    reached: "a document known within a day is served stale; else 429 with Retry-After, a claim `not_checked`",
  },
  addressPerTenSeconds: {
    counts: "address",
    per: "10 s",
    default: 300,
    variable: null,
    derived: { from: "addressPerMinute", fraction: 1 / 4, atLeast: 1 },
    fleet: true,
    refused: "address_budget",
    reached: "as for the address's minute: its minute is spread, at most a quarter of it in any 10 s",
  },
  addressSharePerMinute: {
    counts: "client at one address",
    per: "minute",
    default: 300,
    variable: null,
    derived: { from: "addressPerMinute", fraction: 1 / 4, atLeast: 1 },
    countsSends: true,
    fleet: true,
    refused: "client_share",
    reached: "as for the address's minute, for this client alone: no one client spends more than a quarter of it",
  },
  hostPerMinute: {
    counts: "host name",
    per: "minute",
    default: 300,
    variable: { name: "IDENT_HOST_BUDGET_PER_MIN", min: 1, max: 1_000_000 },
    countsSends: true,
    fleet: true,
    refused: "host_budget",
    reached: "a document known within a day is served stale; else 429 with Retry-After, a claim `not_checked`",
  },
  hostSharePerMinute: {
    counts: "client at one host name",
    per: "minute",
    default: 75,
    variable: null,
    derived: { from: "hostPerMinute", fraction: 1 / 4, atLeast: 1 },
    countsSends: true,
    fleet: true,
    refused: "client_share",
    reached: "as for the host name's minute, for this client alone: no one client spends more than a quarter of it",
  },
  fetchesPerQuery: {
    counts: "query",
    per: "query",
    default: 300,
    variable: { name: "IDENT_MAX_FETCHES_PER_QUERY", min: 10, max: 100_000 },
    fleet: false,
    refused: "query_budget",
    reached: "the claims past it are `not_checked` (a query's own documents always fit)",
  },
  coldLookups: {
    counts: "client",
    per: "minute",
    default: 30,
    variable: { name: "IDENT_COLD_LOOKUPS_PER_MIN", min: 1, max: 1_000_000 },
    fleet: true,
    refused: "cold_lookups",
    reached: "429 with Retry-After, a second late; cached answers still served",
  },
  refreshes: {
    counts: "client",
    per: "minute",
    default: 5,
    variable: null,
    fleet: true,
    refused: "refreshes",
    reached: "429 with Retry-After (`?refresh=1`, Re-check now, the live check)",
  },
  searches: {
    counts: "client",
    per: "minute",
    default: 120,
    variable: { name: "IDENT_SEARCHES_PER_MIN", min: 1, max: 1_000_000 },
    fleet: true,
    refused: "searches",
    reached: "429 with Retry-After, a second late (`/search` of the index, `/api/search` and the sitemaps together)",
  },
  storeReads: {
    counts: "client",
    per: "minute",
    default: 600,
    variable: { name: "IDENT_STORE_READS_PER_MIN", min: 1, max: 1_000_000 },
    fleet: true,
    refused: "store_reads",
    reached:
      "429 with Retry-After, a second late, before the request is read: every GET or HEAD answered from the index that is not a lookup (badges, preview images, feeds, sitemaps, searches, changes, histories, issuer and home pages; not a page the page cache answers)",
  },
  searchesAtOnce: {
    counts: "instance",
    per: "at once",
    default: 4,
    variable: null,
    fleet: false,
    refused: "search_busy",
    reached: "the search waits its turn, the client with the fewest searches in progress first, then the one that searched least lately",
  },
  searchesWaiting: {
    counts: "instance",
    per: "waiting",
    default: 16,
    variable: null,
    derived: { from: "searchesAtOnce", fraction: 4, atLeast: 1 },
    fleet: false,
    refused: "search_busy",
    reached:
      "503 with Retry-After, a second late; a full queue makes room for a lighter client than one waiting (fewer in progress, then less lately), refusing the heaviest one's newest",
  },
  searchesInProgress: {
    counts: "client",
    per: "at once",
    default: 2,
    variable: null,
    fleet: false,
    refused: "searches_in_progress",
    reached: "429 with Retry-After (a search, a sitemap or a feed: anything that reads the index as a search)",
  },
  connectionsPerClient: {
    counts: "client",
    per: "at once",
    default: 256,
    variable: { name: "IDENT_MAX_CONNECTIONS_PER_CLIENT", min: 1, max: 100_000 },
    fleet: false,
    refused: "connections",
    reached:
      "the connections beyond are closed at once (by socket address; behind proxies, `IDENT_TRUSTED_HOPS`, the proxy's own limits hold)",
  },
  lookupsInProgress: {
    counts: "client",
    per: "at once",
    default: 8,
    variable: null,
    derived: { from: "coldLookups", fraction: 1 / 4, atLeast: 8 },
    fleet: false,
    refused: "lookups_in_progress",
    reached: "429 with Retry-After, a second late, before the request reaches Next",
  },
  lookupsInInstance: {
    counts: "instance",
    per: "at once",
    default: 320,
    variable: null,
    derived: { from: "outbound", fraction: 5, atLeast: 1 },
    fleet: false,
    refused: "busy",
    reached: "503 with Retry-After, before the request reaches Next (a quarter sooner for a client with lookups in progress)",
  },
  requestsInInstance: {
    counts: "instance",
    per: "at once",
    default: 512,
    variable: null,
    derived: { from: "outbound", fraction: 8, atLeast: 1 },
    fleet: false,
    refused: "busy",
    reached: "503 with Retry-After, before the request reaches Next; health and readiness always answered",
  },
  subscriptionsPerClient: {
    counts: "client",
    per: "at once",
    default: 20,
    variable: { name: "IDENT_SUBSCRIPTIONS_PER_CLIENT", min: 1, max: 1_000_000 },
    fleet: true,
    refused: "subscriptions",
    reached: "429 from `POST /api/webhooks` and the hub: a client holds at most this many live webhooks and WebSub subscriptions together",
  },
  subscribesPerMinute: {
    counts: "client",
    per: "minute",
    default: 10,
    variable: { name: "IDENT_SUBSCRIBES_PER_MIN", min: 1, max: 1_000_000 },
    fleet: true,
    refused: "subscribes",
    reached: "429 with Retry-After: webhooks made, tested or deleted and WebSub requests, together",
  },
  callbackHostAtOnce: {
    counts: "host name",
    per: "at once",
    default: 4,
    variable: null,
    fleet: false,
    refused: "busy",
    reached: "the delivery waits its turn: a slow or hanging callback host delays its own deliveries only",
  },
  deliveriesAtOnce: {
    counts: "instance",
    per: "at once",
    default: 64,
    variable: null,
    fleet: false,
    refused: "busy",
    reached:
      "the delivery waits for a slot; nothing is refused, the outbox keeps it; a delivery whose callback has not answered within 2 s gives its slot back",
  },
  deliveriesInFlight: {
    counts: "instance",
    per: "at once",
    default: 256,
    variable: null,
    fleet: false,
    refused: "busy",
    reached: "the delivery waits for a slot, as above: deliveries at once and those waiting on their callback's answer, together",
  },
} as const satisfies Record<string, LimitDeclaration>;

export type LimitName = keyof typeof LIMITS;

/** The value of every limit, as configured. */
export type TrafficSettings = Record<LimitName, number>;

export const LIMIT_NAMES = Object.keys(LIMITS) as LimitName[];

export const isLimitName = (name: string): name is LimitName => Object.hasOwn(LIMITS, name);

/**
 * Every limit's value from the configured variables (those missing take their default); a derived
 * limit follows the one it is derived from.
 */
export function trafficSettings(set: Partial<Record<LimitName, number>> = {}): TrafficSettings {
  const values = {} as TrafficSettings;
  const value = (name: LimitName): number => {
    const d: LimitDeclaration = LIMITS[name];
    if (set[name] !== undefined) return set[name];
    if (!d.derived) return d.default;
    const from = d.derived.from;
    if (!isLimitName(from)) throw new Error(`${name} is derived from ${from}, which is not a limit`);
    return Math.max(d.derived.atLeast, Math.ceil(value(from) * d.derived.fraction));
  };
  for (const name of LIMIT_NAMES) values[name] = value(name);
  return values;
}

/**
 * The default fetch deadline (`IDENT_FETCH_TIMEOUT_MS`, lib/limits.ts), declared here because the
 * limits on requests sent count each one this long beyond its minute (`countsSends`).
 */
export const FETCH_DEADLINE_MS = 10_000;

/** One minute, the window of every per-minute limit. */
export const MINUTE_MS = 60_000;

/**
 * How long a windowed limit counts each take: its minute or its 10 s, and for a per-minute limit on
 * requests sent (`countsSends`) the fetch deadline beyond. A 10 s limit spreads a minute's spend
 * and counts its spends only (its requests may reach the publisher up to a deadline later).
 */
export function windowSpanMs(declaration: LimitDeclaration, sendMarginMs: number = FETCH_DEADLINE_MS): number {
  if (declaration.per === "10 s") return 10_000;
  return MINUTE_MS + (declaration.countsSends ? sendMarginMs : 0);
}

/**
 * The refusal a client meets at the limit `name`: the kind its declaration names, and nothing else
 * (docs/architecture.md#traffic). Every limit refuses through this, so the refusal a client gets is
 * the one its row in the table says.
 */
export function refusedAt<N extends LimitName>(name: N, message: string, retryAfterS: number): Refusal<(typeof LIMITS)[N]["refused"]> {
  return refusal(LIMITS[name].refused, message, retryAfterS);
}
