import { promises as dns } from "node:dns";
import { createSecureContext, rootCertificates } from "node:tls";
import { pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";
import { Agent, buildConnector, request } from "undici";
import { DEFAULTS } from "../limits";
import { isDomain } from "../protocol/ids";
import { matchConnectTo, type ConnectToEntry } from "./connect-to";
import { guardedLookup, isPublicAddress, type Resolve } from "./guard";

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
export type FetchFailed = FetchMeta & { ok: false; status: FailureStatus; message: string };
export type FetchOutcome = FetchFound | FetchFailed;

/** A document fetcher; the resolver is built from one (STYLE: no global fetch). */
export type Fetcher = (url: string, mode: FetchMode) => Promise<FetchOutcome>;

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

/**
 * The guarded fetcher (docs/decisions.md#fetching): HTTPS on 443 only, redirects followed by hand (each hop checked
 * again), one deadline with real cancellation, byte caps counted after decompression, and an address
 * guard at connect time that dials the address it checked.
 */
export function createFetcher(options: FetcherOptions = {}): Fetcher & { close(): Promise<void> } {
  const timeoutMs = options.timeoutMs ?? DEFAULTS.fetchTimeoutMs;
  const maxBytes = options.maxBytes ?? DEFAULTS.maxBytes;
  const maxRedirects = options.maxRedirects ?? DEFAULTS.maxRedirects;
  const connectTo = options.connectTo ?? [];
  // One secure context for the fetcher: a `ca` option on each connection would re-parse every root.
  const tlsOptions =
    options.ca && options.ca.length > 0 ? { secureContext: createSecureContext({ ca: [...rootCertificates, ...options.ca] }) } : {};

  const guarded = buildConnector({
    ...tlsOptions,
    timeout: timeoutMs,
    lookup: guardedLookup(options.resolve ?? defaultResolve, options.isAllowed ?? isPublicAddress),
  });
  const direct = buildConnector({ ...tlsOptions, timeout: timeoutMs });
  const agent = new Agent({
    connections: DEFAULTS.perHost,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect(opts, callback) {
      const target = matchConnectTo(connectTo, opts.hostname, Number(opts.port || 443));
      if (!target) return guarded(opts, callback);
      // An entry that keeps the host still resolves it, so the guard still applies.
      if (target.host === null) return guarded({ ...opts, port: String(target.port) }, callback);
      // docs/decisions.md#connect-to: dial the named override without DNS or guard; TLS still verifies the original host name.
      return direct({ ...opts, hostname: target.host, port: String(target.port), servername: opts.hostname }, callback);
    },
  });
  const headers = (mode: FetchMode) => ({
    accept: ACCEPT[mode],
    // Only what is decoded with a bounded window (32 KiB); brotli's may be 16 MiB per stream.
    "accept-encoding": "gzip, deflate",
    "user-agent": options.userAgent ?? "ident-resolver",
  });

  async function fetchDocument(url: string, mode: FetchMode): Promise<FetchOutcome> {
    const started = performance.now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new FetchStop("timeout", `no answer within ${timeoutMs} ms`)), timeoutMs);
    const meta: FetchMeta = { url, finalUrl: url, httpStatus: null, contentType: null, ms: 0 };
    const fail = (status: FailureStatus, message: string): FetchFailed => ({
      ...meta,
      ok: false,
      status,
      message,
      ms: Math.round(performance.now() - started),
    });
    try {
      let current: URL;
      try {
        current = new URL(url);
      } catch {
        return fail("blocked", `${url} is not a URL`);
      }
      for (let hop = 0; ; hop++) {
        const refused = checkTarget(current);
        if (refused) return fail("blocked", `${current.href}: ${refused}`);
        meta.finalUrl = current.href;
        const res = await request(current, {
          dispatcher: agent,
          method: "GET",
          headers: headers(mode),
          signal: controller.signal,
        });
        meta.httpStatus = res.statusCode;
        meta.contentType = headerValue(res.headers["content-type"]);
        const location = headerValue(res.headers.location);
        if (REDIRECTS.has(res.statusCode) && location) {
          discard(res.body);
          if (hop >= maxRedirects) return fail("blocked", `more than ${maxRedirects} redirects`);
          try {
            current = new URL(location, current);
          } catch {
            return fail("blocked", `redirect to an invalid URL`);
          }
          continue;
        }
        if (res.statusCode !== 200) {
          discard(res.body);
          return fail("not_found", `${current.href} answered HTTP ${res.statusCode}`);
        }
        const cap = maxBytes[mode];
        const declared = Number(headerValue(res.headers["content-length"]) ?? NaN);
        const encoding = (headerValue(res.headers["content-encoding"]) ?? "identity").trim().toLowerCase();
        if (encoding === "identity" && declared > cap) {
          discard(res.body);
          return fail("too_large", `Content-Length ${declared} is over the ${cap}-byte limit`);
        }
        const bytes = await readCapped(res.body, encoding, cap);
        const body = new TextDecoder("utf-8").decode(bytes); // strips a UTF-8 BOM (docs/decisions.md#fetching)
        return {
          ...meta,
          ok: true,
          status: "found",
          httpStatus: 200,
          body,
          bytes: bytes.byteLength,
          ms: Math.round(performance.now() - started),
        };
      }
    } catch (err) {
      if (controller.signal.aborted) return fail("timeout", `no complete answer within ${timeoutMs} ms`);
      if (err instanceof FetchStop) return fail(err.status, err.message);
      const code = errorCode(err);
      if (code === "IDENT_BLOCKED") return fail("blocked", errorMessage(err));
      if (code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
        return fail("timeout", `no complete answer within ${timeoutMs} ms`);
      }
      return fail("unreachable", errorMessage(err));
    } finally {
      clearTimeout(timer);
    }
  }

  return Object.assign(fetchDocument, { close: () => agent.close() });
}

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

function errorMessage(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; depth++, e = e.cause) {
    if (e.message && !parts.includes(e.message)) parts.push(e.message);
  }
  return parts.join(": ") || "connection failed";
}
