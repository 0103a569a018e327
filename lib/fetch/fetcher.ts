import { DEFAULTS } from "../limits.ts";
import { extend } from "../objects.ts";
import type { FetchBudgets } from "../traffic/budgets.ts";
import { createAtOnceLimiter } from "../traffic/at-once.ts";
import { LIMITS } from "../traffic/limits.ts";
import { createOutboundGate, type OutboundGate, type Priority, type Ticket } from "../traffic/outbound.ts";
import { isRefusal, LOCAL_FAULTS, refusal, type FetchRefusal } from "../traffic/refusal.ts";
import type { ConnectToEntry } from "./connect-to.ts";
import { createConnections, loadUndici, type Connections, type SocketStats } from "./connections.ts";
import { isPublicAddress, lookupAll, type Resolve } from "./guard.ts";
import { failureMessage, rawMessage } from "./failure-message.ts";
import { undiciGuardMissing } from "./runtime.ts";
import { discard, headerValue, readCapped } from "./body.ts";
import { ACCEPT, checkTarget, failedOutcome, FetchStop, REDIRECTS } from "./target.ts";
import type { FailureStatus, Fetcher, FetchFailed, FetchFound, FetchMeta, FetchMode, FetchOptions, FetchOutcome } from "./outcome.ts";

export type { SocketStats } from "./connections.ts";

export type FetcherOptions = {
  /** One deadline for connect, headers and body together (docs/decisions.md#fetching). @default 10000 */
  timeoutMs?: number;
  /** `IDENT_CONNECT_TO` entries; a match is dialled directly, without DNS or the guard. */
  connectTo?: readonly ConnectToEntry[];
  /** Host name resolver. @default dns.lookup with all addresses */
  resolve?: Resolve;
  /** Address policy. @default isPublicAddress; tests on loopback pass their own. */
  isAllowed?: (address: string) => boolean;
  /** Extra trusted CA certificates (PEM), added to Node's roots. Normally NODE_EXTRA_CA_CERTS does this. */
  ca?: readonly string[];
  /** @default "ident-resolver" */
  userAgent?: string;
  /** Byte caps on the decoded body (docs/decisions.md#fetching). @default { json: 1 MiB, html: 2 MiB } */
  maxBytes?: { json: number; html: number };
  /** Highest number of redirects followed. @default 3 */
  maxRedirects?: number;
  /** Fetches to one host name at a time (docs/architecture.md#traffic: `hostAtOnce`). @default 6 */
  hostAtOnce?: number;
  /** Fetches to one IP address at a time (`addressAtOnce`). @default 32 */
  addressAtOnce?: number;
  /** The instance's outbound cap (`outbound`). @default 64 in flight, waits up to the fetch timeout */
  outbound?: OutboundGate;
  /** The per-minute budgets each request spends (host name, address, the client's share). @default none */
  budgets?: FetchBudgets;
};

/** What one hop of a fetch answered: a redirect to follow, the outcome, or a refusal. */
type Hop = { redirect: URL } | { outcome: FetchOutcome } | { refused: FetchRefusal };

/** One fetch in progress: its request, its deadline (from its first slot) and what it has learnt so far. */
type FetchRun = {
  mode: FetchMode;
  priority: Priority;
  client: string;
  ticket: Ticket;
  controller: AbortController;
  timer: ReturnType<typeof setTimeout> | undefined;
  started: number;
  /** Its facts so far, `ms` among them in the place the outcome keeps it. */
  meta: FetchMeta & { ms: number };
};

/** Runs a task in its turn for a key (lib/traffic/at-once.ts). */
type AtOnceLimiter = ReturnType<typeof createAtOnceLimiter>;

/** What every fetch of one fetcher shares: its options, its limits and gate, and its connections. */
type FetcherState = {
  options: FetcherOptions;
  timeoutMs: number;
  maxBytes: { json: number; html: number };
  maxRedirects: number;
  perName: AtOnceLimiter;
  perAddress: AtOnceLimiter;
  outbound: OutboundGate;
  connections: Connections;
  userAgent: string;
};

/**
 * The guarded fetcher (docs/decisions.md#fetching): HTTPS on 443 only, redirects followed by hand (each
 * hop checked again), one deadline with real cancellation, byte caps counted after decompression, and
 * an address guard at connect time that dials the address it checked. Each hop waits its turn for
 * the host name and the address it dials and for an outbound slot, then spends its budgets
 * (docs/architecture.md#traffic); the deadline starts when the first hop gets its slot.
 */
export function createFetcher(options: FetcherOptions = {}): Fetcher & { close(): Promise<void>; sockets(): SocketStats } {
  const timeoutMs = options.timeoutMs ?? DEFAULTS.fetchTimeoutMs;
  const maxBytes = options.maxBytes ?? DEFAULTS.maxBytes;
  const maxRedirects = options.maxRedirects ?? DEFAULTS.maxRedirects;
  const hostAtOnce = options.hostAtOnce ?? LIMITS.hostAtOnce.default;
  const perName = createAtOnceLimiter(hostAtOnce);
  const perAddress = createAtOnceLimiter(options.addressAtOnce ?? LIMITS.addressAtOnce.default);
  const outbound = options.outbound ?? createOutboundGate({ max: LIMITS.outbound.default, maxWaitMs: timeoutMs });
  const connections = createConnections({
    timeoutMs,
    connectTo: options.connectTo ?? [],
    resolve: options.resolve ?? lookupAll,
    isAllowed: options.isAllowed ?? isPublicAddress,
    ...(options.ca ? { ca: options.ca } : {}),
    perOrigin: hostAtOnce,
    maxSockets: outbound.max,
  });
  const userAgent = options.userAgent ?? "ident-resolver";
  const state: FetcherState = { options, timeoutMs, maxBytes, maxRedirects, perName, perAddress, outbound, connections, userAgent };

  // docs/library.md#runtimes: where the guard cannot hold, nothing is fetched, and the outcome says why.
  const unguarded = undiciGuardMissing();

  /** The fetcher itself: one document, within this fetcher's limits. */
  function fetchDocument(url: string, mode: FetchMode, fetchOptions: FetchOptions = {}): Promise<FetchOutcome | FetchRefusal> {
    if (unguarded) return Promise.resolve(unguardedOutcome(url, unguarded));
    return fetchWithin(state, url, mode, fetchOptions);
  }

  return Object.assign(fetchDocument, { close: () => connections.close(), sockets: () => connections.sockets() });
}

/** The outcome of every fetch where the guard cannot hold. */
const unguardedOutcome = (url: string, why: string): FetchFailed =>
  failedOutcome({ url, finalUrl: url, httpStatus: null, contentType: null }, performance.now(), "blocked", why);

/** The run's failure (./target.ts, failedOutcome). */
const fail = (run: FetchRun, status: FailureStatus, message: string, detail?: string): FetchFailed =>
  failedOutcome(run.meta, run.started, status, message, detail);

/** The deadline starts when the first hop gets its outbound slot, not while it waits for one. */
function startDeadline(timeoutMs: number, run: FetchRun) {
  if (run.timer) return;
  run.started = performance.now();
  run.timer = setTimeout(() => run.controller.abort(new FetchStop("timeout", `no answer within ${timeoutMs} ms`)), timeoutMs);
}

/**
 * One hop in its turn: for the host name, for the address it dials, for an outbound slot and room
 * for a socket; then its budgets, then the request. The first hop waits at most the gate's longest
 * wait; a later one, within the document's deadline.
 */
function hop(state: FetcherState, run: FetchRun, current: URL): Promise<Hop> {
  const waitUntil = run.timer ? run.controller.signal : run.ticket.signal;
  return state.perName(
    current.hostname,
    async () => {
      const dialled = await state.connections.dial(current);
      try {
        return await state.perAddress(dialled.key, () => withSlot(state, run, current, dialled.key, waitUntil), waitUntil, run.client);
      } finally {
        dialled.unpin();
      }
    },
    waitUntil,
    run.client,
  );
}

/** A hop with its turn for the host name and the address: its outbound slot, room for a socket, its budgets, then its request. */
async function withSlot(state: FetcherState, run: FetchRun, current: URL, address: string, waitUntil: AbortSignal): Promise<Hop> {
  const { connections } = state;
  const release = await state.outbound.acquire(run.priority, waitUntil, run.client);
  try {
    const claim = await connections.socketRoom(waitUntil);
    try {
      const refused = await state.options.budgets?.({ host: current.hostname.toLowerCase(), address, client: run.client });
      if (refused) return { refused };
      run.ticket.started();
      startDeadline(state.timeoutMs, run);
      return await request(state, run, current);
    } finally {
      connections.unclaim(claim);
    }
  } finally {
    release();
  }
}

/** One HTTP request: a redirect to follow, or the outcome with its body read within the cap. */
async function request(state: FetcherState, run: FetchRun, current: URL): Promise<Hop> {
  const [{ request: undiciRequest }, dispatcher] = await Promise.all([loadUndici(), state.connections.agent()]);
  const res = await undiciRequest(current, {
    dispatcher,
    method: "GET",
    headers: {
      accept: ACCEPT[run.mode],
      // Only what is decoded with a bounded window (32 KiB); brotli's may be 16 MiB per stream.
      "accept-encoding": "gzip, deflate",
      "user-agent": state.userAgent,
    },
    signal: run.controller.signal,
    // One connection per request (TLS sessions are resumed): a kept-alive idle socket would hold
    // room under the socket cap that a fetch waiting for a slot needs (docs/decisions.md#outbound-work).
    reset: true,
  });
  run.meta.httpStatus = res.statusCode;
  run.meta.contentType = headerValue(res.headers["content-type"]);
  const location = headerValue(res.headers.location);
  if (REDIRECTS.has(res.statusCode) && location) {
    discard(res.body);
    try {
      return { redirect: new URL(location, current) };
    } catch {
      return { outcome: fail(run, "blocked", `redirect to an invalid URL`) };
    }
  }
  if (res.statusCode !== 200) {
    discard(res.body);
    return { outcome: fail(run, "not_found", `${current.href} answered HTTP ${res.statusCode}`) };
  }
  const cap = state.maxBytes[run.mode];
  const declared = Number(headerValue(res.headers["content-length"]) ?? NaN);
  const encoding = (headerValue(res.headers["content-encoding"]) ?? "identity").trim().toLowerCase();
  if (encoding === "identity" && declared > cap) {
    discard(res.body);
    return { outcome: fail(run, "too_large", `Content-Length ${declared} is over the ${cap}-byte limit`) };
  }
  const bytes = await readCapped(res.body, encoding, cap);
  const body = new TextDecoder("utf-8").decode(bytes); // strips a UTF-8 BOM (docs/decisions.md#fetching)
  const outcome: FetchFound = extend(run.meta, {
    ok: true as const,
    status: "found" as const,
    httpStatus: 200,
    body,
    bytes: bytes.byteLength,
    ms: Math.round(performance.now() - run.started),
  });
  return { outcome };
}

/** What an error ended a fetch as: a refusal (a wait given up, a fault of this machine) or the publisher's failure. */
function endedBy(timeoutMs: number, run: FetchRun, err: unknown): FetchOutcome | FetchRefusal {
  if (isRefusal(err)) return err as FetchRefusal;
  if (run.controller.signal.aborted) return fail(run, "timeout", `no complete answer within ${timeoutMs} ms`);
  if (err instanceof FetchStop) return fail(run, err.status, err.message);
  const code = errorCode(err);
  // docs/decisions.md#outbound-work: a fault of this machine is ours, never the publisher's.
  if (code !== undefined && LOCAL_FAULTS.has(code)) {
    return refusal("local_fault", `this resolver could not fetch ${run.meta.url} (${code}); try again shortly`, 5);
  }
  if (code === "IDENT_BLOCKED") return fail(run, "blocked", rawMessage(err));
  if (code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
    return fail(run, "timeout", `no complete answer within ${timeoutMs} ms`);
  }
  return fail(run, "unreachable", failureMessage(err, new URL(run.meta.finalUrl).hostname), rawMessage(err));
}

/** One document: its outbound ticket, then its hops, each checked, until an outcome, a refusal or too many redirects. */
async function fetchWithin(
  state: FetcherState,
  url: string,
  mode: FetchMode,
  fetchOptions: FetchOptions,
): Promise<FetchOutcome | FetchRefusal> {
  const ticket = state.outbound.enter();
  if (isRefusal(ticket)) return ticket;
  const run: FetchRun = {
    mode,
    priority: fetchOptions.priority ?? "person",
    client: fetchOptions.client ?? "local",
    ticket,
    controller: new AbortController(),
    timer: undefined,
    started: performance.now(),
    meta: { url, finalUrl: url, httpStatus: null, contentType: null, ms: 0 },
  };
  try {
    let current: URL;
    try {
      current = new URL(url);
    } catch {
      return fail(run, "blocked", `${url} is not a URL`);
    }
    for (let hops = 0; ; hops++) {
      const refused = checkTarget(current);
      if (refused) return fail(run, "blocked", `${current.href}: ${refused}`);
      run.meta.finalUrl = current.href;
      const answer = await hop(state, run, current);
      if ("refused" in answer) return answer.refused;
      if ("outcome" in answer) return answer.outcome;
      if (hops >= state.maxRedirects) return fail(run, "blocked", `more than ${state.maxRedirects} redirects`);
      current = answer.redirect;
    }
  } catch (err) {
    return endedBy(state.timeoutMs, run, err);
  } finally {
    clearTimeout(run.timer);
    ticket.leave();
  }
}

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    if (typeof e === "object" && e !== null) {
      const code = (e as { code?: unknown }).code;
      if (typeof code === "string" && code !== "UND_ERR_SOCKET" && code !== "ECONNRESET") return code;
      e = (e as { cause?: unknown }).cause;
    } else break;
  }
  return undefined;
}
