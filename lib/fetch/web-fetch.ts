/**
 * A fetcher over any WHATWG `fetch` a library user brings (docs/library.md#what-you-can-bring): the
 * rules of docs/decisions.md#fetching that a `fetch` lets a caller keep (HTTPS on 443 to a domain,
 * redirects followed by hand and each hop checked, one deadline for the whole fetch, the byte cap
 * counted as the body arrives). Which addresses it may reach is that `fetch`'s own business: the
 * address guard is the Node entry's (./fetcher.ts), never this one's.
 */
import { untilAborted } from "../abort.ts";
import { DEFAULTS } from "../limits.ts";
import type { Fetcher, FetchFailed, FetchFound, FetchMode } from "./outcome.ts";
import { followHops, newHopRun, type HopAnswer } from "./hops.ts";
import { ACCEPT, checkTarget, failedOutcome, FetchStop } from "./target.ts";

/** What the adapter needs of a `fetch`: the standard one's call, with a string URL. */
export type WebFetch = (url: string, init: RequestInit) => Promise<Response>;

export type WebFetcherOptions = {
  /** One deadline for the whole fetch, redirects and body included. @default 10000 */
  timeoutMs?: number;
  /** Decoded bytes of a JSON document, and of an HTML page. @default 1 MiB, 2 MiB */
  maxBytes?: { json: number; html: number };
  /** @default 3 */
  maxRedirects?: number;
  /** Sent as `User-Agent`, except from a web page (there it would need a CORS preflight). */
  userAgent?: string;
};

/** Whether this runs in a web page, where a `fetch` is bound by CORS. */
const IN_A_PAGE = typeof (globalThis as { document?: unknown }).document !== "undefined";

/**
 * The body, read until it is whole, or a too_large stop as soon as it passes `cap` bytes (the rest is
 * not read); a `fetch` that does not end its body when its signal aborts is left at the deadline all the same.
 */
async function readCapped(res: Response, cap: number, signal: AbortSignal): Promise<Uint8Array> {
  const reader = res.body?.getReader();
  if (!reader) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await untilAborted(reader.read(), signal);
      if (done) break;
      total += value.byteLength;
      if (total > cap) throw new FetchStop("too_large", `body is over the ${cap}-byte limit`);
      chunks.push(value);
    }
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    throw err;
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** One GET of `current`; a browser's `fetch` cannot hand a redirect back, so there it is followed and where it ended is checked. */
async function get(fetchFn: WebFetch, current: URL, mode: FetchMode, signal: AbortSignal, userAgent: string): Promise<HopAnswer> {
  const init = (redirect: RequestRedirect): RequestInit => ({
    method: "GET",
    // In a page, User-Agent would make the request need a CORS preflight that static hosts refuse.
    headers: IN_A_PAGE ? { accept: ACCEPT[mode] } : { accept: ACCEPT[mode], "user-agent": userAgent },
    redirect,
    // Nothing of the page's goes with it: no cookies, no referrer.
    credentials: "omit",
    referrerPolicy: "no-referrer",
    signal,
  });
  const first = await untilAborted(fetchFn(current.href, init("manual")), signal);
  const res = first.type === "opaqueredirect" ? await untilAborted(fetchFn(current.href, init("follow")), signal) : first;
  const landed = res.redirected && res.url ? checkTarget(new URL(res.url)) : null;
  if (landed) throw new FetchStop("blocked", `${res.url}: ${landed}`);
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    location: res.headers.get("location"),
    discard: () => res.body?.cancel().catch(() => undefined),
    read: (cap) => readCapped(res, cap, signal),
  };
}

/** The fetch of `url`, hop by hop (./hops.ts), within the deadline. */
async function fetchDocument(
  fetchFn: WebFetch,
  options: Required<WebFetcherOptions>,
  url: string,
  mode: FetchMode,
): Promise<FetchFound | FetchFailed> {
  const run = newHopRun(url);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  try {
    return await followHops(run, options.maxBytes[mode], options.maxRedirects, (current) =>
      get(fetchFn, current, mode, controller.signal, options.userAgent),
    );
  } catch (err) {
    if (controller.signal.aborted)
      return failedOutcome(run.meta, run.started, "timeout", `no complete answer within ${options.timeoutMs} ms`);
    if (err instanceof FetchStop) return failedOutcome(run.meta, run.started, err.status, err.message);
    const detail =
      err instanceof Error ? [err.message, err.cause instanceof Error ? err.cause.message : ""].filter(Boolean).join(": ") : String(err);
    return failedOutcome(run.meta, run.started, "unreachable", `the connection to ${new URL(run.meta.finalUrl).hostname} failed`, detail);
  } finally {
    clearTimeout(timer);
  }
}

/** A {@link Fetcher} over `fetchFn`, with the protocol's deadline, cap and redirect rules (docs/library.md). */
export function fetcherFromFetch(fetchFn: WebFetch, options: WebFetcherOptions = {}): Fetcher {
  const settings: Required<WebFetcherOptions> = {
    timeoutMs: options.timeoutMs ?? DEFAULTS.fetchTimeoutMs,
    maxBytes: options.maxBytes ?? DEFAULTS.maxBytes,
    maxRedirects: options.maxRedirects ?? DEFAULTS.maxRedirects,
    userAgent: options.userAgent ?? "ident-resolver",
  };
  return (url, mode) => fetchDocument(fetchFn, settings, url, mode);
}
