/**
 * Which page a URL is (docs/architecture.md#routes): each page kind is a row of the route table
 * (web/routes.ts), which says its status, cache key and admission; the per-request decision
 * (page-request.ts) starts from it.
 */
import { isDomain, looksLikeIdentifier, parseQuery, type Query } from "ident-resolver";
import { decodeCursor, decodeIssuedCursor, parseSearchText } from "ident-resolver/store";

export type Page =
  /** `/`: the search form. */
  | { kind: "home" }
  /** `/reasons`: every reason and problem code, explained. */
  | { kind: "reasons" }
  /** `/entity/{domain}`: the canonical page of one entity. */
  | { kind: "entity"; query: Query & { kind: "domain" } }
  /** `/search?q=` with an identifier: a lookup. */
  | { kind: "lookup"; query: Query }
  /** `/search?q=` with other text: a search of the index (docs/decisions.md#search), which fetches nothing. */
  | { kind: "index-search"; text: string; cursor: string | null }
  /** `/issuer/{domain}?after=`: a page of the credentials the index knows a domain issues. */
  | { kind: "issuer"; domain: string; cursor: string | null }
  /** `/issuer/{domain}?after=` with a page link that is not one: HTTP 400, and a link to the first page. */
  | { kind: "bad-issuer-page"; domain: string }
  /** `/search` without a valid query: the form again, with the reason, as HTTP 400. */
  | { kind: "bad-query"; q: string; message: string }
  /** `/entity/` or `/issuer/` with anything that is not a domain: HTTP 404. */
  | { kind: "no-entity" }
  /** `/check?q={domain}`: the publisher's check (docs/publishing.md#check), live when its rate limit allows. */
  | { kind: "check"; query: Query & { kind: "domain" } }
  /** `/check` without a query: the form. */
  | { kind: "check-form" }
  /** `/check?q=` with something that is not a domain: the form again with the reason, as HTTP 400. */
  | { kind: "bad-check"; q: string; message: string };

/** The page at `pathname` with `searchParams`, or null for any other path (the API, assets, feeds, images). */
export function pageOf(pathname: string, searchParams: URLSearchParams): Page | null {
  if (pathname === "/") return { kind: "home" };
  if (pathname === "/reasons") return { kind: "reasons" };
  if (pathname === "/check") {
    const q = (searchParams.get("q") ?? "").trim();
    if (q === "") return { kind: "check-form" };
    const parsed = parseQuery(q);
    if (!parsed.ok) return { kind: "bad-check", q, message: parsed.message };
    if (parsed.query.kind === "property_id" || parsed.query.kind === "credential_id") {
      return { kind: "bad-check", q, message: "The check takes the domain of an entity (alice.example), not a property or credential id" };
    }
    const domain = parsed.query.domain;
    return { kind: "check", query: { input: domain, kind: "domain", domain } };
  }
  if (pathname === "/search") {
    const q = searchParams.get("q") ?? "";
    const parsed = parseQuery(q);
    if (parsed.ok) return { kind: "lookup", query: parsed.query };
    if (looksLikeIdentifier(q)) return { kind: "bad-query", q, message: parsed.message };
    const text = parseSearchText(q);
    if (!text.ok) return { kind: "bad-query", q, message: text.message };
    const cursor = searchParams.get("cursor");
    if (decodeCursor(cursor) === null) return { kind: "bad-query", q, message: "The page link is not valid; search again" };
    return { kind: "index-search", text: text.text, cursor };
  }
  const [, section, segment] = /^\/(entity|issuer)\/([^/]*)\/?$/.exec(pathname) ?? [];
  if (segment === undefined) return null;
  const domain = decoded(segment);
  if (domain === null || !isDomain(domain)) return { kind: "no-entity" };
  const lower = domain.toLowerCase();
  if (section === "issuer") {
    // An empty `after=` is the first page, as an empty search cursor is.
    const cursor = searchParams.get("after") || null;
    if (cursor !== null && decodeIssuedCursor(cursor) === null) return { kind: "bad-issuer-page", domain: lower };
    return { kind: "issuer", domain: lower, cursor };
  }
  return { kind: "entity", query: { input: lower, kind: "domain", domain: lower } };
}

/**
 * The domain of a badge's path, `/entity/{domain}/badge.svg` (web/badge.ts), read as an entity page's
 * is and lower-cased; null when the path names no domain; undefined for any other path.
 */
export function badgeOf(pathname: string): string | null | undefined {
  const segment = /^\/entity\/([^/]*)\/badge\.svg$/.exec(pathname)?.[1];
  if (segment === undefined) return undefined;
  const domain = decoded(segment);
  return domain !== null && isDomain(domain) ? domain.toLowerCase() : null;
}

/** Whether the page is a resolver answer (an entity page or a lookup), rather than a form or an error. */
export const isAnswer = (page: Page | null): page is Page & { kind: "entity" | "lookup" } =>
  page?.kind === "entity" || page?.kind === "lookup";

function decoded(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}
