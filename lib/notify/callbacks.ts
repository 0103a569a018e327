/**
 * Callbacks are strangers' addresses (docs/notices.md#callbacks): every intent verification and every
 * delivery is sent the way the resolver fetches (docs/decisions.md#fetching): HTTPS on 443 to a domain
 * name, every address the name resolves to public (the guard dials the address it checked), no
 * redirect followed, one deadline, and at most a few kilobytes of the answer read. One callback host
 * gets a bounded number of requests at once (`callbackHostAtOnce`), so a slow or hanging callback
 * delays its own deliveries only.
 */
import dns from "node:dns/promises";
import { Readable } from "node:stream";
import { createConnections, loadUndici, type Connections } from "../fetch/connections.ts";
import type { ConnectToEntry } from "../fetch/connect-to.ts";
import { matchConnectTo } from "../fetch/connect-to.ts";
import { failureMessage } from "../fetch/failure-message.ts";
import { checkedResolve, isPublicAddress, type Resolve } from "../fetch/guard.ts";
import { checkTarget } from "../fetch/target.ts";
import { readCapped } from "../fetch/body.ts";
import { createAtOnceLimiter } from "../traffic/at-once.ts";
import { LIMITS } from "../traffic/limits.ts";

/** The most of a callback's answer read (WebSub's echoed challenge fits many times over). */
export const CALLBACK_ANSWER_BYTES = 4096;
/** A callback URL's most characters. */
export const MAX_CALLBACK_LENGTH = 2048;

export type CallbackOptions = {
  /** The deadline of one request, connection to last byte (`IDENT_FETCH_TIMEOUT_MS`). @default 10000 */
  timeoutMs?: number;
  /** `IDENT_CONNECT_TO` entries: a match is dialled directly, as the fetcher does (docs/decisions.md#connect-to). */
  connectTo?: readonly ConnectToEntry[];
  resolve?: Resolve;
  /** Address policy. @default isPublicAddress */
  isAllowed?: (address: string) => boolean;
  ca?: readonly string[];
  /** Requests to one callback host at once (`callbackHostAtOnce`). */
  hostAtOnce?: number;
  /** Requests to all callbacks at once, those waiting on an answer included (`deliveriesInFlight`). */
  atOnce?: number;
  userAgent?: string;
};

export type CallbackRequest = { method: "GET" | "POST"; headers?: Record<string, string>; body?: string };
/** What a callback answered: its status and the start of its body; or why nothing came, in words. */
export type CallbackAnswer = { ok: true; status: number; body: string } | { ok: false; status: null; error: string; timedOut?: true };

export type CallbackClient = {
  /** Sends one request to `url`, in its host's turn; never throws. */
  send(url: string, request: CallbackRequest): Promise<CallbackAnswer>;
  /** Why `url` cannot be a callback (its form, or an address its name resolves to), or null when it can. */
  refuse(url: string): Promise<string | null>;
  close(): Promise<void>;
};

const defaultResolve: Resolve = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** Why `text` is not a callback URL by its form alone, or null (docs/notices.md#callbacks). */
export function callbackFormError(text: string): string | null {
  if (text.length > MAX_CALLBACK_LENGTH) return `the callback URL is longer than ${MAX_CALLBACK_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "the callback is not an absolute URL";
  }
  const bad = checkTarget(url);
  return bad === null ? null : `the callback must be https:// on port 443 at a domain name: ${bad}`;
}

export function createCallbackClient(options: CallbackOptions = {}): CallbackClient {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const connectTo = options.connectTo ?? [];
  const resolve = options.resolve ?? defaultResolve;
  const isAllowed = options.isAllowed ?? isPublicAddress;
  const resolveChecked = checkedResolve(resolve, isAllowed);
  const connections: Connections = createConnections({
    timeoutMs,
    connectTo,
    resolve,
    isAllowed,
    ...(options.ca ? { ca: options.ca } : {}),
    perOrigin: options.hostAtOnce ?? LIMITS.callbackHostAtOnce.default,
    maxSockets: Number.MAX_SAFE_INTEGER,
  });
  const perHost = createAtOnceLimiter(options.hostAtOnce ?? LIMITS.callbackHostAtOnce.default);
  const all = createAtOnceLimiter(options.atOnce ?? LIMITS.deliveriesInFlight.default);
  const userAgent = options.userAgent ?? "ident-resolver (notices; docs/notices.md)";
  const target: Target = { connectTo, resolveChecked, connections, timeoutMs, userAgent };
  return {
    refuse: (url) => refuse(target, url),
    async send(text, request) {
      const form = callbackFormError(text);
      if (form) return { ok: false, status: null, error: form };
      const url = new URL(text);
      // The host's turn first: a delivery waiting behind its own slow host holds none of the others' room.
      return perHost(url.hostname.toLowerCase(), () => all("all", () => sendNow(target, url, request)));
    },
    close: () => connections.close(),
  };
}

/** What a callback client sends with: the routing, the guard, its connections and deadline. */
type Target = {
  connectTo: readonly ConnectToEntry[];
  resolveChecked: ReturnType<typeof checkedResolve>;
  connections: Connections;
  timeoutMs: number;
  userAgent: string;
};

/** `CallbackClient.refuse`: the URL's form, then every address its name resolves to. */
async function refuse(t: Target, text: string): Promise<string | null> {
  const form = callbackFormError(text);
  if (form) return form;
  const url = new URL(text);
  if (matchConnectTo(t.connectTo, url.hostname, 443)?.host) return null;
  try {
    await t.resolveChecked(url.hostname);
    return null;
  } catch (err) {
    return err instanceof Error && err.name === "BlockedAddressError" ? err.message : failureMessage(err, url.hostname);
  }
}

/**
 * What a callback's one-request client is closed with once its request is over. Undici makes a new
 * error for a close without one, and the socket's stream reads its stack: at 10,000 deliveries about
 * 7 % of the notifier's time (docs/notices.md#how-fast-and-how-much-memory). Nothing is waiting on
 * the client by then, so nothing sees it.
 */
const OVER = Object.assign(new Error("the callback's request is over"), { name: "CallbackRequestOver" });
void OVER.stack;

/** One request, no redirect followed, one deadline, the answer's first bytes read; never throws. */
async function sendNow(t: Target, url: URL, request: CallbackRequest): Promise<CallbackAnswer> {
  const { request: undiciRequest } = await loadUndici();
  const signal = AbortSignal.timeout(t.timeoutMs);
  const dispatcher = await t.connections.client(new URL(url.origin));
  try {
    const answer = await undiciRequest(url, {
      method: request.method,
      headers: Object.assign({ "user-agent": t.userAgent }, request.headers ?? {}),
      body: request.body ?? null,
      dispatcher,
      signal,
    });
    // No redirect is followed: a 3xx is the answer, and not a success.
    const bytes = await readCapped(answer.body as unknown as Readable, "identity", CALLBACK_ANSWER_BYTES).catch(() => Buffer.alloc(0));
    if (!answer.body.destroyed) answer.body.destroy();
    return { ok: true, status: answer.statusCode, body: bytes.toString("utf8") };
  } catch (err) {
    if (signal.aborted)
      return { ok: false, status: null, error: `${url.hostname} did not answer within ${t.timeoutMs} ms`, timedOut: true };
    if (err instanceof Error && err.name === "BlockedAddressError") return { ok: false, status: null, error: err.message };
    return { ok: false, status: null, error: failureMessage(err, url.hostname) };
  } finally {
    void dispatcher.destroy(OVER).catch(() => undefined);
  }
}
