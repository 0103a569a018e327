/**
 * The guarded fetcher where undici's cannot guard (docs/library.md#runtimes): Bun runs undici's
 * `request` on its own fetch and ignores the dispatcher, so a connect-time guard built on it would
 * silently do nothing. Here the guard resolves and checks the name itself, and `node:https.request`
 * dials the checked address, with the name for TLS: the same on Node, Bun and Deno. The rules are the guarded fetcher's (docs/decisions.md#fetching): HTTPS
 * on 443 to a domain, redirects by hand with each hop checked, one deadline, the cap counted after
 * decompression, `IDENT_CONNECT_TO` entries dialled directly.
 */
import type { IncomingMessage } from "node:http";
import { DEFAULTS } from "../limits.ts";
import { discard, headerValue, readCapped } from "./body.ts";
import { matchConnectTo, type ConnectToEntry } from "./connect-to.ts";
import { failureMessage, rawMessage } from "./failure-message.ts";
import type { Fetcher, FetchFailed, FetchFound, FetchMode } from "./outcome.ts";
import { checkedResolve, isPublicAddress, lookupAll, type Resolve } from "./guard.ts";
import { followHops, newHopRun, type HopAnswer } from "./hops.ts";
import { ACCEPT, failedOutcome, FetchStop } from "./target.ts";

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
 * Node's HTTPS and TLS roots, loaded at the first fetch: on Node this fetcher is not the one
 * used, and importing the package should not load what it will not run (docs/library.md#figures).
 */
let modules: Promise<{ request: typeof import("node:https").request; rootCertificates: readonly string[] }> | undefined;
const loadModules = () =>
  (modules ??= Promise.all([import("node:https"), import("node:tls")]).then(([https, tls]) => ({
    request: https.request,
    rootCertificates: tls.rootCertificates,
  })));

type Settings = {
  timeoutMs: number;
  maxBytes: { json: number; html: number };
  connectTo: readonly ConnectToEntry[];
  /** Extra trusted CAs, added to the runtime's roots at the first fetch. */
  ca: readonly string[] | undefined;
  userAgent: string;
  /** The guard: every address of a name, checked (./guard.ts). */
  resolveChecked: ReturnType<typeof checkedResolve>;
};

/**
 * Where a hop dials (docs/decisions.md#address-guard): a connect-to entry's address as named, else
 * an address the guard resolved and checked for the name. The request goes to that address itself,
 * never back through the runtime's resolver: a runtime that ignored a `lookup` option (older Bun
 * releases are reported to) cannot send it elsewhere, and a second DNS answer cannot either.
 */
async function dialled(settings: Settings, url: URL): Promise<{ host: string; port: number }> {
  const port = Number(url.port || 443);
  const to = matchConnectTo(settings.connectTo, url.hostname, port);
  if (to?.host) return { host: to.host, port: to.port };
  const [checked] = await settings.resolveChecked(url.hostname);
  if (!checked) throw Object.assign(new Error(`${url.hostname} has no address`), { code: "ENOTFOUND" });
  return { host: checked.address, port: to?.port ?? port };
}

/** One GET of `url`, its body not read yet. */
async function get(settings: Settings, url: URL, mode: FetchMode, signal: AbortSignal): Promise<IncomingMessage> {
  const [{ request, rootCertificates }, to] = await Promise.all([loadModules(), dialled(settings, url)]);
  return new Promise((resolve, reject) => {
    const req = request({
      host: to.host,
      port: to.port,
      // TLS verifies the name asked for, whatever address is dialled.
      servername: url.hostname,
      path: `${url.pathname}${url.search}`,
      method: "GET",
      headers: { host: url.host, accept: ACCEPT[mode], "accept-encoding": "gzip, deflate", "user-agent": settings.userAgent },
      ...(settings.ca ? { ca: [...rootCertificates, ...settings.ca] } : {}),
      agent: false,
      signal,
    });
    req.once("response", resolve).once("error", reject);
    req.end();
  });
}

/** A response as the hops read it (./hops.ts). */
const hopAnswer = (res: IncomingMessage): HopAnswer => ({
  status: res.statusCode ?? 0,
  contentType: headerValue(res.headers["content-type"]),
  location: headerValue(res.headers.location),
  discard: () => discard(res),
  read: (cap) => readCapped(res, (headerValue(res.headers["content-encoding"]) ?? "identity").trim().toLowerCase(), cap),
});

/** The fetch of `url`, hop by hop, within one deadline. */
async function fetchDocument(settings: Settings, url: string, mode: FetchMode): Promise<FetchFound | FetchFailed> {
  const run = newHopRun(url);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), settings.timeoutMs);
  try {
    return await followHops(run, settings.maxBytes[mode], DEFAULTS.maxRedirects, async (current) =>
      hopAnswer(await get(settings, current, mode, controller.signal)),
    );
  } catch (err) {
    if (controller.signal.aborted)
      return failedOutcome(run.meta, run.started, "timeout", `no complete answer within ${settings.timeoutMs} ms`);
    if (err instanceof FetchStop) return failedOutcome(run.meta, run.started, err.status, err.message);
    if ((err as { code?: unknown }).code === "IDENT_BLOCKED") return failedOutcome(run.meta, run.started, "blocked", rawMessage(err));
    return failedOutcome(run.meta, run.started, "unreachable", failureMessage(err, new URL(run.meta.finalUrl).hostname), rawMessage(err));
  } finally {
    clearTimeout(timer);
  }
}

/** The guarded fetcher over `node:https` (docs/library.md#runtimes). */
export function createPortableFetcher(options: PortableFetcherOptions = {}): Fetcher {
  const resolve: Resolve = options.resolve ?? lookupAll;
  const settings: Settings = {
    timeoutMs: options.timeoutMs ?? DEFAULTS.fetchTimeoutMs,
    maxBytes: DEFAULTS.maxBytes,
    connectTo: options.connectTo ?? [],
    ca: options.ca && options.ca.length > 0 ? options.ca : undefined,
    userAgent: options.userAgent ?? "ident-resolver",
    resolveChecked: checkedResolve(resolve, options.isAllowed ?? isPublicAddress),
  };
  return (url, mode) => fetchDocument(settings, url, mode);
}
