/**
 * A fetcher over any WHATWG `fetch` a library user brings (docs/library.md#what-you-can-bring): the
 * rules of docs/decisions.md#fetching that a `fetch` lets a caller keep (HTTPS on 443 to a domain,
 * redirects followed by hand and each hop checked, one deadline for the whole fetch, the byte cap
 * counted as the body arrives). Which addresses it may reach is that `fetch`'s own business: the
 * address guard is the Node entry's (./fetcher.ts), never this one's.
 */
import { untilAborted } from "../abort.ts";
import { keptMessage } from "../documents/display-limits.ts";
import { DEFAULTS } from "../limits.ts";
import { extend } from "../objects.ts";
import type { FailureStatus, Fetcher, FetchFailed, FetchFound, FetchMode } from "./fetcher.ts";
import { ACCEPT, checkTarget, REDIRECTS } from "./target.ts";

/** What the adapter needs of a `fetch`: the standard one's call, with a string URL. */
export type WebFetch = (url: string, init: RequestInit) => Promise<Response>;

export type WebFetcherOptions = {
  /** One deadline for the whole fetch, redirects and body included. @default 10000 */
  timeoutMs?: number;
  /** Decoded bytes of a JSON document, and of an HTML page. @default 1 MiB, 2 MiB */
  maxBytes?: { json: number; html: number };
  /** @default 3 */
  maxRedirects?: number;
  /** Sent where the runtime lets a caller set it (a browser does not). */
  userAgent?: string;
};

type Run = {
  meta: { url: string; finalUrl: string; httpStatus: number | null; contentType: string | null };
  started: number;
};

const failed = (run: Run, status: FailureStatus, message: string, detail?: string): FetchFailed =>
  extend(run.meta, {
    ok: false as const,
    status,
    message: keptMessage(message),
    ...(detail === undefined || detail === message ? {} : { detail: keptMessage(detail) }),
    ms: Math.round(performance.now() - run.started),
  });

/**
 * The body, read until it is whole or passes `cap` bytes (then null, and the rest is not read); a
 * `fetch` that does not end its body when its signal aborts is left at the deadline all the same.
 */
async function readCapped(res: Response, cap: number, signal: AbortSignal): Promise<Uint8Array | null> {
  const reader = res.body?.getReader();
  if (!reader) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await untilAborted(reader.read(), signal).catch(async (err: unknown) => {
      await reader.cancel().catch(() => undefined);
      throw err;
    });
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** A redirect's next URL, or the failure that ends the fetch there. */
function nextHop(run: Run, res: Response, current: URL, hop: number, maxRedirects: number): URL | FetchFailed {
  if (hop >= maxRedirects) return failed(run, "blocked", `more than ${maxRedirects} redirects`);
  try {
    return new URL(res.headers.get("location") ?? "", current);
  } catch {
    return failed(run, "blocked", "redirect to an invalid URL");
  }
}

/** One GET of `current`; a browser's `fetch` cannot hand a redirect back, so there it is followed and its end checked. */
async function get(fetchFn: WebFetch, current: URL, mode: FetchMode, signal: AbortSignal, userAgent: string): Promise<Response> {
  const init = (redirect: RequestRedirect): RequestInit => ({
    method: "GET",
    headers: { accept: ACCEPT[mode], "user-agent": userAgent },
    redirect,
    signal,
  });
  const res = await untilAborted(fetchFn(current.href, init("manual")), signal);
  return res.type === "opaqueredirect" ? untilAborted(fetchFn(current.href, init("follow")), signal) : res;
}

/** The fetch of `url`, hop by hop, within the deadline. */
async function fetchDocument(
  fetchFn: WebFetch,
  options: Required<WebFetcherOptions>,
  url: string,
  mode: FetchMode,
): Promise<FetchFound | FetchFailed> {
  const run: Run = { meta: { url, finalUrl: url, httpStatus: null, contentType: null }, started: performance.now() };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
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
      const res = await get(fetchFn, current, mode, controller.signal, options.userAgent);
      run.meta.httpStatus = res.status;
      run.meta.contentType = res.headers.get("content-type");
      // A redirect the runtime followed itself (a browser's) is checked where it ended.
      const landed = res.redirected && res.url ? checkTarget(new URL(res.url)) : null;
      if (landed) return failed(run, "blocked", `${res.url}: ${landed}`);
      if (REDIRECTS.has(res.status) && res.headers.has("location")) {
        await res.body?.cancel().catch(() => undefined);
        const next = nextHop(run, res, current, hop, options.maxRedirects);
        if (!(next instanceof URL)) return next;
        current = next;
        continue;
      }
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => undefined);
        return failed(run, "not_found", `${current.href} answered HTTP ${res.status}`);
      }
      const cap = options.maxBytes[mode];
      const bytes = await readCapped(res, cap, controller.signal);
      if (!bytes) return failed(run, "too_large", `body is over the ${cap}-byte limit`);
      const body = new TextDecoder("utf-8").decode(bytes); // strips a UTF-8 BOM (docs/decisions.md#fetching)
      const ms = Math.round(performance.now() - run.started);
      return extend(run.meta, { ok: true as const, status: "found" as const, httpStatus: 200 as const, body, bytes: bytes.byteLength, ms });
    }
  } catch (err) {
    if (controller.signal.aborted) return failed(run, "timeout", `no complete answer within ${options.timeoutMs} ms`);
    const detail =
      err instanceof Error ? [err.message, err.cause instanceof Error ? err.cause.message : ""].filter(Boolean).join(": ") : String(err);
    return failed(run, "unreachable", `the connection to ${current.hostname} failed`, detail);
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
