/**
 * What every fetcher asks and follows, whatever it fetches with (docs/decisions.md#fetching): the
 * guarded one (./fetcher.ts) and one over a `fetch` a library user brings (./web-fetch.ts).
 */
import { isDomain } from "../protocol/ids.ts";
import type { FetchMode } from "./fetcher.ts";

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
