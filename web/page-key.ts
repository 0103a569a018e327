/**
 * Which page a request is for, told by proxy.ts to the root layout, which renders the document
 * head (SPEC §8: an entity page's JSON-LD is in the head). The proxy always overwrites both headers,
 * so a client cannot name another page's entity.
 */
import { isDomain, parseQuery } from "../lib/protocol/ids";

export const PAGE_HEADER = "x-ident-page";
export const REFRESH_HEADER = "x-ident-refresh";

export const entityPageKey = (domain: string) => `entity:${domain.toLowerCase()}`;
export const searchPageKey = (q: string) => `search:${q}`;

/** The key of an entity page with a domain or a search page with a valid query; null for any other path. */
export function pageKeyOf(pathname: string, searchParams: URLSearchParams): string | null {
  if (pathname === "/search") {
    const q = searchParams.get("q") ?? "";
    return parseQuery(q).ok ? searchPageKey(q) : null;
  }
  const segment = /^\/entity\/([^/]+)\/?$/.exec(pathname)?.[1];
  const domain = segment === undefined ? null : decoded(segment);
  return domain !== null && isDomain(domain) ? entityPageKey(domain) : null;
}

/** `entity:{domain}` or `search:{q}` back into its parts. */
export function parsePageKey(key: string): { kind: "entity"; domain: string } | { kind: "search"; q: string } | null {
  if (key.startsWith("entity:")) return { kind: "entity", domain: key.slice("entity:".length) };
  if (key.startsWith("search:")) return { kind: "search", q: key.slice("search:".length) };
  return null;
}

/** A key as a header value: percent-encoded, since a query may hold characters a header cannot. */
export const toHeader = (key: string) => encodeURIComponent(key);

/** The key a header value carries, or null when it is missing or malformed. */
export function fromHeader(value: string | null): string | null {
  return value === null ? null : decoded(value);
}

function decoded(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}
