import { promises as dns } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { connect as connectTls, createSecureContext, rootCertificates, type SecureContext, type TLSSocket } from "node:tls";
import { LRUCache } from "lru-cache";
import { pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";
import { Agent, buildConnector, request as undiciRequest } from "undici";
import type { LookupAddress } from "node:dns";
import { DEFAULTS } from "../limits";
import { extend } from "../objects";
import { isDomain } from "../protocol/ids";
import type { RateLimiter } from "../rate-limit";
import { matchConnectTo, type ConnectToEntry } from "./connect-to";
import { checkedResolve, guardedLookup, isPublicAddress, type Resolve } from "./guard";
import { createHostLimiter } from "./host-limit";
import { createOutboundGate, type OutboundGate, type Priority } from "./outbound";
import { networkWords, rawMessage } from "./network-words";
import { LOCAL_FAULTS, NotFetched } from "./refusal";

/** What is fetched: a JSON document or an HTML page (fallback or rel=me). */
export type FetchMode = "json" | "html";

/** Outcomes of one fetch (docs/decisions.md#fetching). */
export type FailureStatus = "not_found" | "unreachable" | "timeout" | "too_large" | "blocked";

type FetchMeta = {
  /** The URL asked for. */
  url: string;
  /** The URL of the last hop. */
  finalUrl: string;
  httpStatus: number | null;
  contentType: string | null;
  ms: number;
};

export type FetchFound = FetchMeta & { ok: true; status: "found"; httpStatus: 200; body: string; bytes: number };
/** `message` is in plain words; `detail`, when there is one, is the library's own (docs/decisions.md#reasons). */
export type FetchFailed = FetchMeta & { ok: false; status: FailureStatus; message: string; detail?: string };
export type FetchOutcome = FetchFound | FetchFailed;

/**
 * A document fetcher; the resolver is built from one. It answers every outcome of the publisher's
 * side, and throws {@link NotFetched} for work this resolver declined or could not do.
 */
export type Fetcher = (url: string, mode: FetchMode, options?: { priority?: Priority }) => Promise<FetchOutcome>;

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
  /** Fetches to one host name, and to one address, at a time (docs/decisions.md#budget). @default 6 */
  perHost?: number;
  /** The instance's outbound cap (docs/decisions.md#outbound-work). @default 64 in flight, waits up to the fetch timeout */
  outbound?: OutboundGate;
  /** Requests to one host per minute, for all clients together (`IDENT_HOST_BUDGET_PER_MIN`). @default none */
  hostBudget?: { limiter: RateLimiter; perMinute: number };
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ACCEPT: Record<FetchMode, string> = {
  json: "application/json, */*;q=0.1",
  html: "text/html, */*;q=0.1",
};

class FetchStop extends Error {
  constructor(
    readonly status: FailureStatus,
    message: string,
  ) {
    super(message);
  }
}

const defaultResolve: Resolve = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * A URL the fetcher may request (docs/decisions.md#fetching): `https:` on port 443, host a domain (never an IP
 * literal), no user info. Checked on the first URL and on every redirect hop.
 */
export function checkTarget(url: URL): string | null {
  if (url.protocol !== "https:") return `${url.protocol} is not https:`;
  if (url.port !== "" && url.port !== "443") return `port ${url.port} is not 443`;
  if (url.username !== "" || url.password !== "") return "the URL carries credentials";
  if (!isDomain(url.hostname)) return `${url.hostname} is not a domain name`;
  return null;
}

/** What one hop of a fetch answered: a redirect to follow, or the outcome. */
type Hop = { redirect: URL } | { outcome: FetchOutcome };

/**
 * The guarded fetcher (docs/decisions.md#fetching): HTTPS on 443 only, redirects followed by hand (each hop checked
 * again), one deadline with real cancellation, byte caps counted after decompression, and an address
 * guard at connect time that dials the address it checked. Each hop waits its turn for the host name,
 * for the address it dials and for an outbound slot; the deadline starts when the first hop gets its
 * slot (docs/decisions.md#outbound-work).
 */
export function createFetcher(options: FetcherOptions = {}): Fetcher & { close(): Promise<void>; sockets(): SocketStats } {
  const timeoutMs = options.timeoutMs ?? DEFAULTS.fetchTimeoutMs;
  const maxBytes = options.maxBytes ?? DEFAULTS.maxBytes;
  const maxRedirects = options.maxRedirects ?? DEFAULTS.maxRedirects;
  const connectTo = options.connectTo ?? [];
  const perName = createHostLimiter(options.perHost ?? DEFAULTS.perHost);
  const perAddress = createHostLimiter(options.perHost ?? DEFAULTS.perHost);
  const outbound = options.outbound ?? createOutboundGate({ max: DEFAULTS.maxOutbound, maxWaitMs: timeoutMs });
  const isAllowed = options.isAllowed ?? isPublicAddress;
  const resolveChecked = checkedResolve(options.resolve ?? defaultResolve, isAllowed);
  // One secure context for the fetcher: a `ca` option on each connection would re-parse every root.
  // One context for every connection (tls.connect would otherwise build one per connection).
  const secureContext = createSecureContext(options.ca && options.ca.length > 0 ? { ca: [...rootCertificates, ...options.ca] } : {});

  // The address each host name is being dialled at, while a hop to it runs: the connection goes to
  // the address the per-address limit counted, and that the guard checked.
  const pinned = new Map<string, { address: LookupAddress; refs: number }>();
  const fallbackLookup = guardedLookup(options.resolve ?? defaultResolve, isAllowed);
  const pinnedLookup = (hostname: string, opts: unknown, callback: unknown): void => {
    const pin = pinned.get(hostname.toLowerCase());
    if (!pin || !isAllowed(pin.address.address)) return fallbackLookup(hostname, opts, callback);
    const cb = (typeof opts === "function" ? opts : callback) as (err: null, address: string | LookupAddress[], family?: number) => void;
    const wantsAll = typeof opts === "object" && opts !== null && (opts as { all?: boolean }).all === true;
    if (wantsAll) cb(null, [pin.address]);
    else cb(null, pin.address.address, pin.address.family);
  };

  // Open outbound sockets, counted from the connection attempt until the socket is closed: a socket
  // of a fetch that was given up (a TLS handshake still running at its deadline) may outlive the
  // fetch, so a slot alone does not bound them. A fetch with its slot waits for room below the cap
  // (docs/decisions.md#outbound-work).
  // A fetch that found room holds a claim on it until its connection starts (the claim becomes the
  // socket) or it ends on a kept-alive socket, so fetches that find room at once cannot overshoot it.
  const sockets: SocketStats = { open: 0, peak: 0 };
  const room: (() => void)[] = [];
  const claims: { used: boolean }[] = [];
  const track = (socket: TLSSocket) => {
    const claim = claims.shift();
    if (claim) claim.used = true;
    sockets.open++;
    sockets.peak = Math.max(sockets.peak, sockets.open);
    socket.once("close", () => {
      sockets.open--;
      room.shift()?.();
    });
  };

  /** Gives back a claim its fetch did not use. */
  const unclaim = (claim: { used: boolean }) => {
    const at = claims.indexOf(claim);
    if (at < 0) return;
    claims.splice(at, 1);
    room.shift()?.();
  };
  // A connection (TCP and TLS) gives up a little before its fetch's deadline, so the socket of a
  // handshake that never ends is closed before the fetch gives its slot to the next one.
  const connectOptions = {
    secureContext,
    timeoutMs: Math.max(50, timeoutMs - 100),
    track,
    sessions: new LRUCache<string, Buffer>({ max: 100 }),
  };
  const guarded = tlsConnector(extend(connectOptions, { lookup: pinnedLookup }));
  const direct = tlsConnector(connectOptions);
  const agent = new Agent({
    connections: options.perHost ?? DEFAULTS.perHost,
    headersTimeout: timeoutMs,
    // Connections are not reused (reset: true below); one made for a request that was given up
    // before it was sent would otherwise sit idle, holding room under the outbound cap, for 4 s.
    keepAliveTimeout: 10,
    keepAliveMaxTimeout: 10,
    bodyTimeout: timeoutMs,
    connect(opts, callback) {
      const target = matchConnectTo(connectTo, opts.hostname, Number(opts.port || 443));
      if (!target) return guarded(opts, callback);
      // An entry that keeps the host still resolves it, so the guard still applies.
      if (target.host === null) return guarded(extend(opts, { port: String(target.port) }), callback);
      // docs/decisions.md#connect-to: dial the named override without DNS or guard; TLS still verifies the original host name.
      return direct(extend(opts, { hostname: target.host, port: String(target.port), servername: opts.hostname }), callback);
    },
  });
  const headers = (mode: FetchMode) => ({
    accept: ACCEPT[mode],
    // Only what is decoded with a bounded window (32 KiB); brotli's may be 16 MiB per stream.
    "accept-encoding": "gzip, deflate",
    "user-agent": options.userAgent ?? "ident-resolver",
  });

  /** The address a hop to `url` dials, pinned while the hop runs; an override is dialled as named. */
  async function dial(url: URL): Promise<{ key: string; unpin(): void }> {
    const host = url.hostname.toLowerCase();
    const target = matchConnectTo(connectTo, host, Number(url.port || 443));
    if (target?.host) return { key: `${target.host}:${target.port}`, unpin: () => undefined };
    let pin = pinned.get(host);
    if (!pin) {
      const [address] = await resolveChecked(host);
      if (!address) throw Object.assign(new Error(`${host} has no address`), { code: "ENOTFOUND" });
      pin = pinned.get(host) ?? { address, refs: 0 };
      pinned.set(host, pin);
    }
    const held = pin;
    held.refs++;
    return {
      key: held.address.address,
      unpin: () => {
        if (--held.refs === 0 && pinned.get(host) === held) pinned.delete(host);
      },
    };
  }

  /** Waits until fewer sockets than the outbound cap are open or claimed, then claims one; or `signal` aborts. */
  async function socketRoom(signal: AbortSignal): Promise<{ used: boolean }> {
    while (sockets.open + claims.length >= outbound.max) {
      signal.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const at = room.indexOf(next);
          if (at >= 0) room.splice(at, 1);
          reject(signal.reason);
        };
        const next = () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
        signal.addEventListener("abort", onAbort, { once: true });
        room.push(next);
      });
    }
    const claim = { used: false };
    claims.push(claim);
    return claim;
  }

  /** Takes one request of the host's budget for this minute, or refuses the hop. */
  async function spendHostBudget(host: string) {
    const budget = options.hostBudget;
    if (!budget) return;
    const decision = await budget.limiter.take(host);
    if (!decision.ok) {
      const message = `${host} has had its ${budget.perMinute} requests from this resolver this minute; try again in ${decision.retryAfterS} s`;
      throw new NotFetched("host_budget", message, decision.retryAfterS);
    }
  }

  async function fetchDocument(url: string, mode: FetchMode, fetchOptions: { priority?: Priority } = {}): Promise<FetchOutcome> {
    const priority = fetchOptions.priority ?? "person";
    let started = performance.now();
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    /** The deadline starts when the first hop gets its outbound slot, not while it waits for one. */
    const startDeadline = () => {
      if (timer) return;
      started = performance.now();
      timer = setTimeout(() => controller.abort(new FetchStop("timeout", `no answer within ${timeoutMs} ms`)), timeoutMs);
    };
    const meta: FetchMeta = { url, finalUrl: url, httpStatus: null, contentType: null, ms: 0 };
    const fail = (status: FailureStatus, message: string, detail?: string): FetchFailed =>
      extend(meta, {
        ok: false as const,
        status,
        message,
        ...(detail === undefined || detail === message ? {} : { detail }),
        ms: Math.round(performance.now() - started),
      });

    /**
     * One request, with its turn for the host name, the address and an outbound slot. The first hop
     * waits at most the gate's longest wait; a later one, within the document's deadline.
     */
    const hop = (current: URL): Promise<Hop> => {
      const waitUntil = timer ? controller.signal : ticket.signal;
      return perName(
        current.hostname,
        async () => {
          const dialled = await dial(current);
          try {
            return await perAddress(
              dialled.key,
              async () => {
                const release = await outbound.acquire(priority, waitUntil);
                try {
                  const claim = await socketRoom(waitUntil);
                  try {
                    ticket.started();
                    startDeadline();
                    return await request(current);
                  } finally {
                    unclaim(claim);
                  }
                } finally {
                  release();
                }
              },
              waitUntil,
            );
          } finally {
            dialled.unpin();
          }
        },
        waitUntil,
      );
    };

    const request = async (current: URL): Promise<Hop> => {
      const res = await undiciRequest(current, {
        dispatcher: agent,
        method: "GET",
        headers: headers(mode),
        signal: controller.signal,
        // One connection per request (TLS sessions are resumed): a kept-alive idle socket would hold
        // room under the outbound cap that a fetch waiting for a slot needs (docs/decisions.md#outbound-work).
        reset: true,
      });
      meta.httpStatus = res.statusCode;
      meta.contentType = headerValue(res.headers["content-type"]);
      const location = headerValue(res.headers.location);
      if (REDIRECTS.has(res.statusCode) && location) {
        discard(res.body);
        try {
          return { redirect: new URL(location, current) };
        } catch {
          return { outcome: fail("blocked", `redirect to an invalid URL`) };
        }
      }
      if (res.statusCode !== 200) {
        discard(res.body);
        return { outcome: fail("not_found", `${current.href} answered HTTP ${res.statusCode}`) };
      }
      const cap = maxBytes[mode];
      const declared = Number(headerValue(res.headers["content-length"]) ?? NaN);
      const encoding = (headerValue(res.headers["content-encoding"]) ?? "identity").trim().toLowerCase();
      if (encoding === "identity" && declared > cap) {
        discard(res.body);
        return { outcome: fail("too_large", `Content-Length ${declared} is over the ${cap}-byte limit`) };
      }
      const bytes = await readCapped(res.body, encoding, cap);
      const body = new TextDecoder("utf-8").decode(bytes); // strips a UTF-8 BOM (docs/decisions.md#fetching)
      const outcome: FetchFound = extend(meta, {
        ok: true as const,
        status: "found" as const,
        httpStatus: 200,
        body,
        bytes: bytes.byteLength,
        ms: Math.round(performance.now() - started),
      });
      return { outcome };
    };

    const ticket = outbound.enter();
    try {
      let current: URL;
      try {
        current = new URL(url);
      } catch {
        return fail("blocked", `${url} is not a URL`);
      }
      for (let hops = 0; ; hops++) {
        const refused = checkTarget(current);
        if (refused) return fail("blocked", `${current.href}: ${refused}`);
        meta.finalUrl = current.href;
        await spendHostBudget(current.hostname.toLowerCase());
        const answer = await hop(current);
        if ("outcome" in answer) return answer.outcome;
        if (hops >= maxRedirects) return fail("blocked", `more than ${maxRedirects} redirects`);
        current = answer.redirect;
      }
    } catch (err) {
      if (err instanceof NotFetched) throw err;
      if (controller.signal.aborted) return fail("timeout", `no complete answer within ${timeoutMs} ms`);
      if (err instanceof FetchStop) return fail(err.status, err.message);
      const code = errorCode(err);
      // docs/decisions.md#outbound-work: a fault of this machine is ours, never the publisher's.
      if (code !== undefined && LOCAL_FAULTS.has(code)) {
        throw new NotFetched("local_fault", `this resolver could not fetch ${url} (${code}); try again shortly`, 5);
      }
      if (code === "IDENT_BLOCKED") return fail("blocked", rawMessage(err));
      if (code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
        return fail("timeout", `no complete answer within ${timeoutMs} ms`);
      }
      return fail("unreachable", networkWords(err, new URL(meta.finalUrl).hostname), rawMessage(err));
    } finally {
      clearTimeout(timer);
      ticket.leave();
    }
  }

  return Object.assign(fetchDocument, { close: () => agent.close(), sockets: (): SocketStats => ({ ...sockets }) });
}

type ConnectOptions = {
  secureContext: SecureContext;
  timeoutMs: number;
  /** Called with every socket as its connection starts. */
  track: (socket: TLSSocket) => void;
  /** TLS sessions by server name, for resumption. */
  sessions: LRUCache<string, Buffer>;
  lookup?: (hostname: string, options: unknown, callback: unknown) => void;
};

/**
 * Opens the TLS connections of the agent: HTTP/1.1 over TLS, the server name verified, one deadline
 * for TCP and TLS together, each socket handed to `track` as it starts (so it is counted until it is
 * closed, whatever happens to the fetch that asked for it).
 */
function tlsConnector(options: ConnectOptions): buildConnector.connector {
  return (opts, callback) => {
    if (opts.protocol !== "https:") return callback(new Error(`${opts.protocol} is not https:`), null);
    const servername = opts.servername || (isIP(opts.hostname) ? undefined : opts.hostname);
    const sessionKey = servername ?? opts.hostname;
    const socket = connectTls({
      host: opts.hostname,
      port: Number(opts.port || 443),
      ...(servername ? { servername } : {}),
      secureContext: options.secureContext,
      ...(options.lookup ? { lookup: options.lookup as LookupFunction } : {}),
      session: options.sessions.get(sessionKey),
      ALPNProtocols: ["http/1.1"],
    });
    options.track(socket);
    socket.setNoDelay(true);
    socket.on("session", (session) => options.sessions.set(sessionKey, session));
    let pending: buildConnector.Callback | null = callback;
    const settle = (err: Error | null) => {
      clearTimeout(timer);
      const cb = pending;
      pending = null;
      if (!cb) return;
      if (err) cb(err, null);
      else cb(null, socket);
    };
    const timer = setTimeout(() => {
      const err = Object.assign(new Error(`no connection within ${options.timeoutMs} ms`), { code: "UND_ERR_CONNECT_TIMEOUT" });
      socket.destroy(err);
    }, options.timeoutMs);
    socket.once("secureConnect", () => settle(null)).on("error", (err) => settle(err));
  };
}

/** Outbound sockets this fetcher has open now, and at most so far. */
export type SocketStats = { open: number; peak: number };

/** Drops a body without reading it; a stream destroyed this way must not throw an unhandled error. */
function discard(stream: Readable): void {
  stream.on("error", () => undefined);
  stream.destroy();
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

/** Reads a body, decoding its Content-Encoding, and stops as soon as it passes `cap` bytes. */
async function readCapped(body: Readable, encoding: string, cap: number): Promise<Buffer> {
  let stream: Readable = body;
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "deflate"
        ? zlib.createInflate()
        : encoding === "identity"
          ? null
          : undefined;
  if (decoder === undefined) {
    discard(body);
    throw new FetchStop("unreachable", `unsupported Content-Encoding ${encoding}`);
  }
  if (decoder) stream = pipeline(body, decoder, () => undefined);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      const buf = chunk as Buffer;
      total += buf.byteLength;
      if (total > cap) throw new FetchStop("too_large", `body is over the ${cap}-byte limit`);
      chunks.push(buf);
    }
  } finally {
    discard(body);
    if (stream !== body) discard(stream);
  }
  return Buffer.concat(chunks, total);
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
