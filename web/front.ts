/**
 * The front door of the server (web/server.ts), before the page cache and Next
 * (docs/deploying.md#staying-up-in-public): every answer gets the security headers, whoever writes it
 * (Next's redirects, static files and 404s included); from the request's route (web/routes.ts), a
 * path that is not valid percent-encoding, a Server Action (this app has none), a body the route does
 * not take and a method it does not answer are answered here, so they never reach Next, never answer
 * 500 and never write a stack trace.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { readFileSync } from "node:fs";
import { format } from "node:util";
import type { Logger } from "ident-resolver/setup";
import { addressGroup } from "ident-resolver/traffic";
import { LIMITS } from "ident-resolver/traffic";
import { CORS_HEADERS } from "./api-headers";
import { SERVER_ACTION_HEADER } from "./framework";
import { FRONT_HEADERS, send } from "./response";
import type { Route } from "./routes";

export { FRONT_HEADERS } from "./response";

/** Whether every segment of `path` decodes as percent-encoded UTF-8. */
function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

const hasBody = (req: IncomingMessage) =>
  req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? "0") > 0;

/**
 * Sets the headers every answer carries, and answers what must not go further. True when it answered.
 * `apiPolicy` goes on its answers to `/api/` (the rate-limit policy every API answer carries, docs/api.md#limits).
 */
export function frontDoor(
  req: IncomingMessage,
  res: ServerResponse,
  route: Route,
  apiPolicy: Readonly<Record<string, string>> = {},
): boolean {
  for (const [name, value] of Object.entries(FRONT_HEADERS)) res.setHeader(name, value);
  const api = route.target.kind === "api";
  const refuse = (status: number, message: string, extra: Record<string, string> = {}) => {
    const code = status === 400 ? "invalid_query" : "invalid_request";
    send(req, res, {
      status,
      headers: Object.assign({}, api ? CORS_HEADERS : {}, api ? apiPolicy : {}, extra, {
        "Content-Type": api ? "application/json" : "text/plain; charset=utf-8",
        "Cache-Control": "no-store",
        // A body not read is not waited for: the connection closes after this answer.
        ...(hasBody(req) ? { Connection: "close" } : {}),
      }),
      body: api ? JSON.stringify({ error: { code, message } }) : `${message}\n`,
    });
    return true;
  };
  // The API answers its own malformed paths, with its headers (web/api.ts).
  if (!api && !decodes(route.path)) return refuse(400, "The path is not valid percent-encoded UTF-8.");
  if (req.headers[SERVER_ACTION_HEADER] !== undefined) return refuse(400, "This app has no server actions.");
  if (hasBody(req)) {
    const cap = req.method === "POST" ? route.row.bodyCap : null;
    if (cap === null) return refuse(413, "This address takes no request body.");
    const length = req.headers["content-length"];
    if (length === undefined) return refuse(411, "A body must say its length (Content-Length).");
    if (Number(length) > cap) return refuse(413, `The body is too large: this address reads at most ${cap} bytes.`);
  }
  // docs/decisions.md#methods: a method the route does not answer is 405 naming those it does, TRACE
  // included; the API answers its own (web/api.ts).
  if (!api && !route.row.methods.includes(req.method ?? "")) {
    return refuse(405, `This address answers ${route.row.methods.join(" and ")} only.`, { Allow: route.row.methods.join(", ") });
  }
  return false;
}

/**
 * What Next writes to the console goes through the app's log (docs/deploying.md#logs): one line,
 * its first line only, within the log's 1 KiB; the whole text, stack included, only at debug level.
 */
export function quietConsole(log: Logger, target: Pick<Console, "error" | "warn"> = console): void {
  const to =
    (level: "error" | "warn") =>
    (...args: unknown[]) => {
      const text = format(...args);
      const first = text.split("\n", 1)[0] ?? "";
      log[level](`next: ${first.replace(/^⨯\s*/, "")}`);
      if (text.length > first.length) log.debug(`next: ${text}`);
    };
  target.error = to("error");
  target.warn = to("warn");
}

/**
 * The raw answer to a request Node's parser refused before any handler saw it (a malformed request
 * line or header, headers too large, too slow), with the same headers as every other answer; the
 * connection is closed after it. A request to `/api/` (as far as `rawPacket`, the bytes the parser
 * had, shows) also gets CORS and `apiHeaders`, as the API's own answers do.
 */
export function clientErrorAnswer(code: string | undefined, rawPacket?: Buffer, apiHeaders: Readonly<Record<string, string>> = {}): string {
  const api = rawPacket !== undefined && /^[A-Z]+ \/api\//.test(rawPacket.subarray(0, 32).toString("latin1"));
  const [status, reason] =
    code === "HPE_HEADER_OVERFLOW"
      ? [431, "Request Header Fields Too Large"]
      : code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "Request Timeout"]
        : [400, "Bad Request"];
  const body = `${reason}\n`;
  const all = Object.assign({}, FRONT_HEADERS, api ? CORS_HEADERS : {}, api ? apiHeaders : {});
  const headers = Object.entries(all).map(([name, value]) => `${name}: ${value}\r\n`);
  return (
    `HTTP/1.1 ${status} ${reason}\r\n${headers.join("")}Content-Type: text/plain; charset=utf-8\r\n` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** How long a connection may take to send its headers, its whole request, or stay silent. */
export const SERVER_TIMEOUTS = { headersMs: 10_000, requestMs: 30_000, idleMs: 60_000, keepAliveMs: 5_000 } as const;

export type GuardOptions = {
  /** `connectionsPerClient` (docs/architecture.md#traffic). */
  maxPerClient: number;
  /**
   * Connections open at most, all clients together (`connectionsInInstance`): the descriptor limit
   * less what the rest of the app needs ({@link connectionRoom}); read again at most once a second, so
   * a limit raised or lowered while the server runs is followed. @default the room at the default
   * outbound cap
   */
  maxOpen?: () => number;
  /** With proxies in front, every connection is a proxy's: not counted per client here. */
  trustedHops: number;
  /** Told of each connection closed at once, or closed to make room. */
  refused?: () => void;
  /** @default SERVER_TIMEOUTS (the tests shorten them) */
  timeouts?: { headersMs: number; requestMs: number; idleMs: number; keepAliveMs: number };
};

/** Descriptors kept for what is not a client's connection: the store, its engine, logs, Next's files, workers. */
export const RESERVED_DESCRIPTORS = 256;

/**
 * Connections the public server may hold (docs/deploying.md#staying-up-in-public): the process's
 * descriptor limit less {@link RESERVED_DESCRIPTORS} and two for each outbound fetch (its socket, and
 * a spare while a connection is replaced), never fewer than 64.
 */
export function connectionRoom(descriptors: number, outbound: number): number {
  return Math.max(64, descriptors - RESERVED_DESCRIPTORS - 2 * outbound);
}

/** This process's soft limit on open descriptors (Linux: /proc/self/limits), or `fallback` where it cannot be read. */
export function descriptorLimit(fallback = 1024): number {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1];
    return line === undefined ? fallback : line === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(line);
  } catch {
    return fallback;
  }
}

/** One open connection: whose, and how many requests it has in progress (none: idle). */
type Held = { client: string; busy: number };

/**
 * Guards the public server (docs/deploying.md#staying-up-in-public): timeouts so a silent or slow
 * connection is not held (headers within 10 s, the whole request within 30 s, 60 s of silence); at
 * most `maxPerClient` connections open per client address, the ones beyond closed at once; and at most
 * `maxOpen` all together, nginx's `worker_connections` beside its `limit_conn`. Near the total (nine
 * tenths of it), each new connection closes an idle one of the address holding the most; at the total,
 * a connection of the address holding the most is closed to make room, an idle one first. When the
 * newcomer's own address holds the most, its new connection takes the place of an idle one of its own,
 * or is closed at the total. A client with few connections is never the one refused. Answers the count of connections open per client and in all, for the
 * tests. Node checks the headers and request timeouts every `connectionsCheckingInterval` (its default
 * 30 s would let a silent socket stay 40 s instead of 10): web/serve.js checks every second.
 */
export function guardServer(server: Server, options: GuardOptions): { open(client?: string): number } {
  const timeouts = options.timeouts ?? SERVER_TIMEOUTS;
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.setTimeout(timeouts.idleMs, (socket) => socket.destroy());
  const readRoom = options.maxOpen ?? (() => connectionRoom(descriptorLimit(), LIMITS.outbound.default));
  const g: Guard = {
    options,
    perClient: options.trustedHops === 0,
    byClient: new Map(),
    held: new WeakMap(),
    total: 0,
    readRoom,
    room: { max: readRoom(), readAt: Date.now() },
  };
  // First of the connection listeners: one refused is closed before HTTP sets anything up for it.
  server.prependListener("connection", (socket: Socket) => admitConnection(g, socket));
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const state = g.held.get(req.socket);
    if (!state) return;
    state.busy++;
    res.once("close", () => state.busy--);
  });
  return { open: (client) => (client === undefined ? g.total : (g.byClient.get(client)?.size ?? 0)) };
}

/** What the guard keeps: each client's connections, what each one holds, the total, and the room there is. */
type Guard = {
  options: GuardOptions;
  perClient: boolean;
  byClient: Map<string, Set<Socket>>;
  held: WeakMap<Socket, Held>;
  total: number;
  readRoom: () => number;
  room: { max: number; readAt: number };
};

/** Connections open at most, read again at most once a second. */
function maxOpen(g: Guard): number {
  if (Date.now() - g.room.readAt >= 1000) g.room = { max: g.readRoom(), readAt: Date.now() };
  return g.room.max;
}

/** The clients holding the most connections first. */
const heaviest = (g: Guard) => [...g.byClient].sort((a, b) => b[1].size - a[1].size);

function idleOf(g: Guard, sockets: Set<Socket>) {
  for (const s of sockets) if (g.held.get(s)?.busy === 0) return s;
  return undefined;
}

function close(g: Guard, socket: Socket) {
  g.options.refused?.();
  socket.destroy();
}

/** Makes room for a connection of `client` near or at the total; false when it is the newcomer's to close. */
function makeRoom(g: Guard, client: string, full: boolean): boolean {
  const order = heaviest(g);
  const most = order[0]?.[1].size ?? 0;
  const own = g.byClient.get(client);
  if ((own?.size ?? 0) >= most) {
    // The newcomer's address holds the most: its new connection takes the place of an idle one of its own.
    const idle = own ? idleOf(g, own) : undefined;
    if (idle) return (close(g, idle), true);
    return !full;
  }
  // An idle connection of the address holding the most, or of the next; at the total, any of the first.
  for (const [, sockets] of order) {
    if (sockets.size <= (g.byClient.get(client)?.size ?? 0)) break;
    const idle = idleOf(g, sockets);
    if (idle) return (close(g, idle), true);
  }
  if (!full) return true;
  const newest = [...(order[0]?.[1] ?? [])].at(-1);
  if (newest) close(g, newest);
  return true;
}

/** A new connection: closed past its client's bound or the total, else counted until it closes. */
function admitConnection(g: Guard, socket: Socket) {
  const client = g.perClient ? addressGroup(socket.remoteAddress ?? "unknown") : "proxy";
  const mine = g.byClient.get(client)?.size ?? 0;
  if (g.perClient && mine >= g.options.maxPerClient) return close(g, socket);
  const max = maxOpen(g);
  if (g.total >= Math.floor(max * 0.9) && !makeRoom(g, client, g.total >= max)) return close(g, socket);
  const sockets = g.byClient.get(client) ?? new Set<Socket>();
  g.byClient.set(client, sockets);
  sockets.add(socket);
  g.held.set(socket, { client, busy: 0 });
  g.total++;
  socket.once("close", () => {
    g.total--;
    sockets.delete(socket);
    if (sockets.size === 0 && g.byClient.get(client) === sockets) g.byClient.delete(client);
  });
}
