/**
 * The front door of the production server (web/serve.js), before the page cache and Next
 * (docs/deploying.md#staying-up-in-public): every answer gets the security headers, whoever writes it
 * (Next's redirects, static files and 404s included); a path that is not valid percent-encoding, a
 * Server Action (this app has none) and a body no route takes are answered here, so they never reach
 * Next, never answer 500 and never write a stack trace.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { format } from "node:util";
import type { Logger } from "../lib/log";
import { addressGroup } from "../lib/traffic/client";
import { CORS_HEADERS } from "./api-headers";
import { SECURITY_HEADERS } from "./security-headers";

/**
 * The routes that take a request body, with the most bytes each reads (POST only). Any other body is
 * refused before a byte of it is read; so is one without a declared length.
 */
export const BODY_CAPS: ReadonlyMap<string, number> = new Map([
  /** The "Re-check now" form: a domain and its field name (app/recheck/route.ts). */
  ["/recheck", 2048],
]);

/**
 * The methods a path outside the API answers (docs/decisions.md#methods): a form's route takes its
 * POST, every other page, feed and file GET and HEAD. The API answers its own (web/api.ts).
 */
export const allowedMethods = (path: string): readonly string[] => (BODY_CAPS.has(path) ? ["POST"] : ["GET", "HEAD"]);

/** What every answer carries; a page's own Content-Security-Policy (proxy.ts) replaces this strict one. */
export const FRONT_HEADERS: Readonly<Record<string, string>> = Object.assign(
  { "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'" },
  SECURITY_HEADERS,
);

/** Whether every segment of `path` decodes as percent-encoded UTF-8. */
function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

function answer(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  apiHeaders: Readonly<Record<string, string>>,
  extra: Record<string, string> = {},
): true {
  const api = (req.url ?? "").startsWith("/api/");
  const code = status === 400 ? "invalid_query" : "invalid_request";
  const body = api ? JSON.stringify({ error: { code, message } }) : `${message}\n`;
  res.writeHead(
    status,
    Object.assign({}, FRONT_HEADERS, api ? CORS_HEADERS : {}, api ? apiHeaders : {}, extra, {
      "Content-Type": api ? "application/json" : "text/plain; charset=utf-8",
      "Content-Length": String(Buffer.byteLength(body)),
      "Cache-Control": "no-store",
      // A body not read is not waited for: the connection closes after this answer.
      ...(hasBody(req) ? { Connection: "close" } : {}),
    }),
  );
  res.end(req.method === "HEAD" ? undefined : body);
  return true;
}

const hasBody = (req: IncomingMessage) =>
  req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? "0") > 0;

/**
 * Sets the headers every answer carries, and answers what must not reach Next. True when it answered.
 * `apiHeaders` go on its answers to `/api/` (the rate-limit policy every API answer carries, docs/api.md#limits).
 */
export function frontDoor(req: IncomingMessage, res: ServerResponse, apiHeaders: Readonly<Record<string, string>> = {}): boolean {
  for (const [name, value] of Object.entries(FRONT_HEADERS)) res.setHeader(name, value);
  const target = req.url ?? "/";
  const at = target.indexOf("?");
  const path = at < 0 ? target : target.slice(0, at);
  const api = path.startsWith("/api/");
  const refuse = (status: number, message: string, extra?: Record<string, string>) => answer(req, res, status, message, apiHeaders, extra);
  // The API answers its own malformed paths, with its headers (web/api.ts); it never hands them to Next.
  if (!decodes(path) && !api) return refuse(400, "The path is not valid percent-encoded UTF-8.");
  if (req.headers["next-action"] !== undefined) return refuse(400, "This app has no server actions.");
  if (hasBody(req)) {
    const cap = req.method === "POST" ? BODY_CAPS.get(path) : undefined;
    if (cap === undefined) return refuse(413, "This address takes no request body.");
    const length = req.headers["content-length"];
    if (length === undefined) return refuse(411, "A body must say its length (Content-Length).");
    if (Number(length) > cap) return refuse(413, `The body is too large: this address reads at most ${cap} bytes.`);
  }
  // docs/decisions.md#methods: a method a page does not take is 405 naming those it does, TRACE included.
  const allowed = allowedMethods(path);
  if (!api && !allowed.includes(req.method ?? "")) {
    return refuse(405, `This address answers ${allowed.join(" and ")} only.`, { Allow: allowed.join(", ") });
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
  /** With proxies in front, every connection is a proxy's: not counted per client here. */
  trustedHops: number;
  /** Told of each connection closed at once. */
  refused?: () => void;
  /** @default SERVER_TIMEOUTS (the tests shorten them) */
  timeouts?: { headersMs: number; requestMs: number; idleMs: number; keepAliveMs: number };
};

/**
 * Guards the public server (docs/deploying.md#staying-up-in-public): timeouts so a silent or slow
 * connection is not held (headers within 10 s, the whole request within 30 s, 60 s of silence), and
 * at most `maxPerClient` connections open per client address, the ones beyond closed at once. Answers
 * the count of connections open per client, for the tests. Node checks the headers and request
 * timeouts every `connectionsCheckingInterval` (its default 30 s would let a silent socket stay 40 s
 * instead of 10): web/serve.js checks every second.
 */
export function guardServer(server: Server, options: GuardOptions): { open(client: string): number } {
  const timeouts = options.timeouts ?? SERVER_TIMEOUTS;
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.setTimeout(timeouts.idleMs, (socket) => socket.destroy());
  const open = new Map<string, number>();
  if (options.trustedHops === 0) {
    // First of the connection listeners: one past the limit is closed before HTTP sets anything up for it.
    server.prependListener("connection", (socket: Socket) => {
      const client = addressGroup(socket.remoteAddress ?? "unknown");
      const count = open.get(client) ?? 0;
      if (count >= options.maxPerClient) {
        options.refused?.();
        socket.destroy();
        return;
      }
      open.set(client, count + 1);
      socket.once("close", () => {
        const left = (open.get(client) ?? 1) - 1;
        if (left > 0) open.set(client, left);
        else open.delete(client);
      });
    });
  }
  return { open: (client) => open.get(client) ?? 0 };
}
