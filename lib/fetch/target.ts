/**
 * What every fetcher asks and follows, whatever it fetches with (docs/decisions.md#fetching): the
 * guarded one (./fetcher.ts), the one over `node:https` (./portable.ts) and the one over a `fetch` a
 * library user brings (./web-fetch.ts).
 */
import { keptMessage } from "../documents/display-limits.ts";
import { extend } from "../objects.ts";
import { isDomain } from "../protocol/ids.ts";
import type { FailureStatus, FetchFailed, FetchMeta, FetchMode } from "./outcome.ts";

/** The statuses whose `Location` is followed, each hop checked again. */
export const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** What each kind of fetch accepts. */
export const ACCEPT: Record<FetchMode, string> = {
  json: "application/json, */*;q=0.1",
  html: "text/html, */*;q=0.1",
};

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

/** A fetch that ends here: a failure of the publisher's side, said in words. */
export class FetchStop extends Error {
  constructor(
    readonly status: FailureStatus,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A failed outcome, its message and detail kept at a problem's length where it is made
 * (docs/decisions.md#validation): a certificate's names made a detail of 32 KB, carried to the page
 * thread and held by the cache for each fetch.
 */
export const failedOutcome = (meta: FetchMeta, started: number, status: FailureStatus, message: string, detail?: string): FetchFailed =>
  extend(meta, {
    ok: false as const,
    status,
    message: keptMessage(message),
    ...(detail === undefined || detail === message ? {} : { detail: keptMessage(detail) }),
    ms: Math.round(performance.now() - started),
  });
