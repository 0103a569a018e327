/**
 * The guarded fetcher where undici's cannot guard (docs/library.md#runtimes): Bun runs undici's
 * `request` on its own fetch and ignores the dispatcher, so a connect-time guard built on it would
 * silently do nothing. `node:https.request` with a `lookup` dials the address the guard checked on
 * Node, Bun and Deno alike. The rules are the guarded fetcher's (docs/decisions.md#fetching): HTTPS
 * on 443 to a domain, redirects by hand with each hop checked, one deadline, the cap counted after
 * decompression, `IDENT_CONNECT_TO` entries dialled directly.
 */
import { promises as dns } from "node:dns";
import type { IncomingMessage } from "node:http";
import { keptMessage } from "../documents/display-limits.ts";
import { DEFAULTS } from "../limits.ts";
import { extend } from "../objects.ts";
import { matchConnectTo, type ConnectToEntry } from "./connect-to.ts";
import { failureMessage, rawMessage } from "./failure-message.ts";
import type { FailureStatus, Fetcher, FetchFailed, FetchFound, FetchMode } from "./fetcher.ts";
import { guardedLookup, isPublicAddress, type Resolve } from "./guard.ts";
import { ACCEPT, checkTarget, REDIRECTS } from "./target.ts";

export type PortableFetcherOptions = {
  /** @default 10000 */
  timeoutMs?: number;
  connectTo?: readonly ConnectToEntry[];
  /** Extra trusted CA certificates (PEM), added to the runtime's roots. */
  ca?: readonly string[];
  userAgent?: string;
  /** Host name resolver. @default dns.lookup with all addresses */
  resolve?: Resolve;
  /** The address policy. @default isPublicAddress */
  isAllowed?: (address: string) => boolean;
};

/**
 * Node's HTTPS, TLS roots and zlib, loaded at the first fetch: on Node this fetcher is not the one
 * used, and importing the package should not load what it will not run (docs/library.md#figures).
 */
let modules:
  | Promise<{ request: typeof import("node:https").request; rootCertificates: readonly string[]; zlib: typeof import("node:zlib") }>
  | undefined;
const loadModules = () =>
  (modules ??= Promise.all([import("node:https"), import("node:tls"), import("node:zlib")]).then(([https, tls, zlib]) => ({
    request: https.request,
    rootCertificates: tls.rootCertificates,
    zlib,
  })));

type Settings = {
  timeoutMs: number;
  maxBytes: { json: number; html: number };
  connectTo: readonly ConnectToEntry[];
  /** Extra trusted CAs, added to the runtime's roots at the first fetch. */
  ca: readonly string[] | undefined;
  userAgent: string;
  lookup: ReturnType<typeof guardedLookup>;
};

type Run = { meta: { url: string; finalUrl: string; httpStatus: number | null; contentType: string | null }; started: number };

class Stop extends Error {
  constructor(
    readonly status: FailureStatus,
    message: string,
  ) {
    super(message);
  }
}

const failed = (run: Run, status: FailureStatus, message: string, detail?: string): FetchFailed =>
  extend(run.meta, {
    ok: false as const,
    status,
    message: keptMessage(message),
    ...(detail === undefined || detail === message ? {} : { detail: keptMessage(detail) }),
    ms: Math.round(performance.now() - run.started),
  });

const header = (value: string | string[] | undefined): string | null => (Array.isArray(value) ? (value[0] ?? null) : (value ?? null));

/** One GET of `url`: the response, its body not read yet. */
async function get(settings: Settings, url: URL, mode: FetchMode, signal: AbortSignal): Promise<IncomingMessage> {
  const port = Number(url.port || 443);
  const to = matchConnectTo(settings.connectTo, url.hostname, port);
  const { request, rootCertificates } = await loadModules();
  return new Promise((resolve, reject) => {
    const req = request({
      // docs/decisions.md#address-guard: a connect-to entry is dialled as named; any other name through the guard.
      host: to?.host ?? url.hostname,
      port: to?.port ?? port,
      servername: url.hostname,
      path: `${url.pathname}${url.search}`,
      method: "GET",
      headers: { host: url.host, accept: ACCEPT[mode], "accept-encoding": "gzip, deflate", "user-agent": settings.userAgent },
      ...(to?.host ? {} : { lookup: settings.lookup as never }),
      ...(settings.ca ? { ca: [...rootCertificates, ...settings.ca] } : {}),
      agent: false,
      signal,
    });
    req.once("response", resolve).once("error", reject);
    req.end();
  });
}

/** The body, decoded, read until whole or past `cap` bytes (then a too_large stop). */
async function readCapped(res: IncomingMessage, cap: number): Promise<Buffer> {
  const { zlib } = await loadModules();
  const encoding = (header(res.headers["content-encoding"]) ?? "identity").trim().toLowerCase();
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "deflate"
        ? zlib.createInflate()
        : encoding === "identity"
          ? null
          : undefined;
  if (decoder === undefined) {
    res.destroy();
    throw new Stop("unreachable", `unsupported Content-Encoding ${encoding}`);
  }
  const stream = decoder ? res.pipe(decoder) : res;
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > cap) throw new Stop("too_large", `body is over the ${cap}-byte limit`);
      chunks.push(chunk);
    }
  } finally {
    res.destroy();
    decoder?.destroy();
  }
  return Buffer.concat(chunks, total);
}

/** The fetch of `url`, hop by hop, within one deadline. */
async function fetchDocument(settings: Settings, url: string, mode: FetchMode): Promise<FetchFound | FetchFailed> {
  const run: Run = { meta: { url, finalUrl: url, httpStatus: null, contentType: null }, started: performance.now() };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), settings.timeoutMs);
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    return failed(run, "blocked", `${url} is not a URL`);
  }
  try {
    for (let hop = 0; ; hop++) {
      const refused = checkTarget(current);
      if (refused) return failed(run, "blocked", `${current.href}: ${refused}`);
      run.meta.finalUrl = current.href;
      const res = await get(settings, current, mode, controller.signal);
      const status = res.statusCode ?? 0;
      run.meta.httpStatus = status;
      run.meta.contentType = header(res.headers["content-type"]);
      const location = header(res.headers.location);
      if (REDIRECTS.has(status) && location) {
        res.destroy();
        if (hop >= DEFAULTS.maxRedirects) return failed(run, "blocked", `more than ${DEFAULTS.maxRedirects} redirects`);
        try {
          current = new URL(location, current);
        } catch {
          return failed(run, "blocked", "redirect to an invalid URL");
        }
        continue;
      }
      if (status !== 200) {
        res.destroy();
        return failed(run, "not_found", `${current.href} answered HTTP ${status}`);
      }
      const bytes = await readCapped(res, settings.maxBytes[mode]);
      const body = new TextDecoder("utf-8").decode(bytes); // strips a UTF-8 BOM (docs/decisions.md#fetching)
      const ms = Math.round(performance.now() - run.started);
      return extend(run.meta, { ok: true as const, status: "found" as const, httpStatus: 200 as const, body, bytes: bytes.byteLength, ms });
    }
  } catch (err) {
    if (controller.signal.aborted) return failed(run, "timeout", `no complete answer within ${settings.timeoutMs} ms`);
    if (err instanceof Stop) return failed(run, err.status, err.message);
    if ((err as { code?: unknown }).code === "IDENT_BLOCKED") return failed(run, "blocked", rawMessage(err));
    return failed(run, "unreachable", failureMessage(err, current.hostname), rawMessage(err));
  } finally {
    clearTimeout(timer);
  }
}

/** The guarded fetcher over `node:https` (docs/library.md#runtimes). */
export function createPortableFetcher(options: PortableFetcherOptions = {}): Fetcher {
  const resolve: Resolve = options.resolve ?? ((hostname) => dns.lookup(hostname, { all: true, verbatim: true }));
  const settings: Settings = {
    timeoutMs: options.timeoutMs ?? DEFAULTS.fetchTimeoutMs,
    maxBytes: DEFAULTS.maxBytes,
    connectTo: options.connectTo ?? [],
    ca: options.ca && options.ca.length > 0 ? options.ca : undefined,
    userAgent: options.userAgent ?? "ident-resolver",
    lookup: guardedLookup(resolve, options.isAllowed ?? isPublicAddress),
  };
  return (url, mode) => fetchDocument(settings, url, mode);
}
