/**
 * The fetcher's connections (docs/decisions.md#fetching): the undici agent with a TLS connector that
 * dials exactly the address the guard checked, the address each host name is pinned to while a hop
 * to it runs, and the count of open sockets under the outbound cap.
 */
import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import type { SecureContext, TLSSocket } from "node:tls";
import { LRUCache } from "lru-cache";
import type { Agent, buildConnector, Dispatcher } from "undici";
import { extend } from "../objects.ts";
import { matchConnectTo, type ConnectToEntry } from "./connect-to.ts";
import { checkedResolve, guardedLookup, type Resolve } from "./guard.ts";

/** Outbound sockets this fetcher has open now, and at most so far. */
export type SocketStats = { open: number; peak: number };

export type ConnectionOptions = {
  timeoutMs: number;
  connectTo: readonly ConnectToEntry[];
  resolve: Resolve;
  isAllowed: (address: string) => boolean;
  ca?: readonly string[];
  /** Connections per origin (the per-host-name limit). */
  perOrigin: number;
  /** Sockets open or being opened at most: the outbound cap. */
  maxSockets: number;
};

/** A room claimed under the socket cap, until its connection starts or its hop ends. */
export type SocketClaim = { used: boolean };

/**
 * undici, `node:tls` and `node:net`, loaded when the first fetch needs them rather than when the
 * package is imported (docs/library.md#figures): a resolver given its own `fetch`, or on Bun or Deno,
 * never loads undici, and `node:tls` with the crypto it brings is a tenth of the import's time.
 */
let undici: Promise<typeof import("undici")> | undefined;
export const loadUndici = (): Promise<typeof import("undici")> => (undici ??= import("undici"));
type Tls = { tls: typeof import("node:tls"); net: typeof import("node:net") };
let tlsModules: Promise<Tls> | undefined;
const loadTls = (): Promise<Tls> =>
  (tlsModules ??= Promise.all([import("node:tls"), import("node:net")]).then(([tls, net]) => ({ tls, net })));

export type Connections = {
  /** The agent, made at the first fetch. */
  agent(): Promise<Agent>;
  /**
   * A client of one connection to `origin`, dialled as the agent dials, for one request and then
   * closed: a sender to many hosts each once (the notifier's callbacks) makes no pool per host.
   */
  client(origin: URL): Promise<Dispatcher>;
  /** The address a hop to `url` dials, pinned while the hop runs: its key for the per-address limits, and `unpin`. */
  dial(url: URL): Promise<{ key: string; unpin(): void }>;
  /** Waits until fewer sockets than the cap are open or claimed, then claims one; or `signal` aborts. */
  socketRoom(signal: AbortSignal): Promise<SocketClaim>;
  /** Gives back a claim its hop did not use. */
  unclaim(claim: SocketClaim): void;
  sockets(): SocketStats;
  close(): Promise<void>;
};

/** What the connections keep: the pins, the open sockets and the claims and waiters for room under the cap. */
type ConnectionState = {
  connectTo: readonly ConnectToEntry[];
  isAllowed: (address: string) => boolean;
  resolveChecked: ReturnType<typeof checkedResolve>;
  /**
   * The address each host name is dialled at while a hop to it runs: the connection goes to the
   * address the per-address limits counted, and that the guard checked.
   */
  pinned: Map<string, { address: LookupAddress; refs: number }>;
  /** The lookup of a host name not pinned (lib/fetch/guard.ts). */
  fallbackLookup: ReturnType<typeof guardedLookup>;
  stats: SocketStats;
  /** Hops waiting for room under the socket cap, first come first served. */
  room: (() => void)[];
  /** Room claimed by hops whose connection has not started yet. */
  claims: SocketClaim[];
  maxSockets: number;
};

export function createConnections(options: ConnectionOptions): Connections {
  const { connectTo, isAllowed } = options;
  const resolveChecked = checkedResolve(options.resolve, isAllowed);
  // Open sockets, counted from the connection attempt until the socket closes: a socket of a fetch
  // that was given up (a handshake still running at its deadline) may outlive the fetch, so a slot
  // alone does not bound them. A hop with its slot claims room under the cap until its connection
  // starts (the claim becomes the socket) or it ends, so hops that find room at once cannot overshoot.
  const state: ConnectionState = {
    connectTo,
    isAllowed,
    resolveChecked,
    pinned: new Map(),
    fallbackLookup: guardedLookup(options.resolve, isAllowed),
    stats: { open: 0, peak: 0 },
    room: [],
    claims: [],
    maxSockets: options.maxSockets,
  };
  const { stats } = state;

  let connectors: Promise<Connectors> | undefined;
  const connectorsOnce = () => (connectors ??= loadTls().then((modules) => createConnectors(state, options, modules)));
  let agent: Promise<Agent> | undefined;

  return {
    agent: () =>
      (agent ??= Promise.all([loadUndici(), connectorsOnce()]).then(([{ Agent: AgentClass }, { guarded, direct }]) =>
        createAgent(AgentClass, options, guarded, direct),
      )),
    client: async (origin) => {
      const [{ Client }, { guarded, direct }] = await Promise.all([loadUndici(), connectorsOnce()]);
      return new Client(origin, dispatcherOptions(options, guarded, direct));
    },
    dial: (url) => dial(state, url),
    socketRoom: (signal) => socketRoom(state, signal),
    unclaim: (claim) => unclaim(state, claim),
    sockets: () => ({ open: stats.open, peak: stats.peak }),
    close: async () => {
      if (agent) await (await agent).close();
    },
  };
}

type Connectors = { guarded: buildConnector.connector; direct: buildConnector.connector };

/** The agent's two connectors, to an address the guard checks and to a connect-to entry's, made at the first fetch. */
function createConnectors(state: ConnectionState, options: ConnectionOptions, { tls, net }: Tls): Connectors {
  // One secure context for every connection: a `ca` option on each would re-parse every root.
  const ca = options.ca && options.ca.length > 0 ? { ca: [...tls.rootCertificates, ...options.ca] } : {};
  // A connection (TCP and TLS) gives up a little before its fetch's deadline, so the socket of a
  // handshake that never ends is closed before the fetch gives its slot to the next one.
  const connectOptions: ConnectOptions = {
    connect: tls.connect,
    isIP: net.isIP,
    secureContext: tls.createSecureContext(ca),
    timeoutMs: Math.max(50, options.timeoutMs - 100),
    track: (socket: TLSSocket) => track(state, socket),
    sessions: new LRUCache<string, Buffer>({ max: 100 }),
  };
  const lookup = (hostname: string, opts: unknown, callback: unknown): void => pinnedLookup(state, hostname, opts, callback);
  return { guarded: tlsConnector(extend(connectOptions, { lookup })), direct: tlsConnector(connectOptions) };
}

/** Looks a host name up at the address it is pinned to while its hop runs; one not pinned (or no longer allowed), as the guard does. */
function pinnedLookup(state: ConnectionState, hostname: string, opts: unknown, callback: unknown): void {
  const { isAllowed, fallbackLookup } = state;
  const pin = state.pinned.get(hostname.toLowerCase());
  if (!pin || !isAllowed(pin.address.address)) return fallbackLookup(hostname, opts, callback);
  const cb = (typeof opts === "function" ? opts : callback) as (err: null, address: string | LookupAddress[], family?: number) => void;
  const wantsAll = typeof opts === "object" && opts !== null && (opts as { all?: boolean }).all === true;
  if (wantsAll) cb(null, [pin.address]);
  else cb(null, pin.address.address, pin.address.family);
}

/** Counts a socket open from its connection attempt until it closes, in the room its hop claimed; its close makes room for the next. */
function track(state: ConnectionState, socket: TLSSocket) {
  const { stats } = state;
  const claim = state.claims.shift();
  if (claim) claim.used = true;
  stats.open++;
  stats.peak = Math.max(stats.peak, stats.open);
  socket.once("close", () => {
    stats.open--;
    state.room.shift()?.();
  });
}

/** The agent: dials through the guard, or an `IDENT_CONNECT_TO` entry's override directly (docs/decisions.md#connect-to). */
function createAgent(
  AgentClass: typeof Agent,
  options: ConnectionOptions,
  guarded: buildConnector.connector,
  direct: buildConnector.connector,
): Agent {
  return new AgentClass(extend(dispatcherOptions(options, guarded, direct), { connections: options.perOrigin }));
}

/** What the agent and each one-off client are made with: deadlines, no keep-alive, the dialling. */
function dispatcherOptions(options: ConnectionOptions, guarded: buildConnector.connector, direct: buildConnector.connector) {
  const { connectTo } = options;
  return {
    headersTimeout: options.timeoutMs,
    // Connections are not reused (each request resets its own); one made for a request given up
    // before it was sent would otherwise sit idle, holding room under the socket cap, for 4 s.
    keepAliveTimeout: 10,
    keepAliveMaxTimeout: 10,
    bodyTimeout: options.timeoutMs,
    connect(opts, callback) {
      const target = matchConnectTo(connectTo, opts.hostname, Number(opts.port || 443));
      if (!target) return guarded(opts, callback);
      // An entry that keeps the host still resolves it, so the guard still applies.
      if (target.host === null) return guarded(extend(opts, { port: String(target.port) }), callback);
      // docs/decisions.md#connect-to: dial the named override without DNS or guard; TLS still verifies the original host name.
      return direct(extend(opts, { hostname: target.host, port: String(target.port), servername: opts.hostname }), callback);
    },
  } satisfies Agent.Options;
}

/** `Connections.dial`: the address a hop to `url` dials, pinned (resolved and checked when not yet) until `unpin`. */
async function dial(state: ConnectionState, url: URL): Promise<{ key: string; unpin(): void }> {
  const { pinned } = state;
  const host = url.hostname.toLowerCase();
  const target = matchConnectTo(state.connectTo, host, Number(url.port || 443));
  if (target?.host) return { key: `${target.host}:${target.port}`, unpin: () => undefined };
  let pin = pinned.get(host);
  if (!pin) {
    const [address] = await state.resolveChecked(host);
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

/** `Connections.socketRoom`: waits in line until fewer sockets than the cap are open or claimed, then claims one. */
async function socketRoom(state: ConnectionState, signal: AbortSignal): Promise<SocketClaim> {
  const { stats, room, claims } = state;
  while (stats.open + claims.length >= state.maxSockets) {
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

/** `Connections.unclaim`: gives back a claim its hop did not use, making room for the next in line. */
function unclaim(state: ConnectionState, claim: SocketClaim): void {
  const at = state.claims.indexOf(claim);
  if (at < 0) return;
  state.claims.splice(at, 1);
  state.room.shift()?.();
}

type ConnectOptions = {
  connect: typeof import("node:tls").connect;
  isIP: typeof import("node:net").isIP;
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
    const servername = opts.servername || (options.isIP(opts.hostname) ? undefined : opts.hostname);
    const sessionKey = servername ?? opts.hostname;
    const socket = options.connect({
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
