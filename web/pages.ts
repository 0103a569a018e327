/**
 * How a page's path and query are read (docs/architecture.md#routes): the parsers the page rows of
 * the route table (web/routes.ts) name. A parser is given what its row's pattern matched and the
 * query, and answers the page the request is: its row's own kind, or the kind of a row it stands for
 * (a bad query's 400, a path naming no domain's 404). The `Page` type (web/routes.ts) is made from
 * what they answer, so a page's shape is written once, here or in its row; nothing here imports
 * the table.
 */
import { isDomain, looksLikeIdentifier, parseQuery, type Query } from "ident-resolver";
import { decodeCursor, decodeIssuedCursor, parseSearchText } from "ident-resolver/store";

/** The query of an entity's own page or its check: one domain. */
export type DomainQuery = Query & { kind: "domain" };

/** `/entity/` or `/issuer/` with anything that is not a domain: HTTP 404 (`page:no-entity`). */
type NoEntity = { kind: "no-entity" };
const NO_ENTITY: NoEntity = { kind: "no-entity" };

/** A page that reads nothing of its path or query (`/`, `/reasons`). */
export const plainPage =
  <K extends string>(kind: K) =>
  (): { kind: K } => ({ kind });

/**
 * A page of one domain, the first group of its row's pattern (`/issuer/{domain}/members`), read as
 * an entity page's is and lower-cased; a path that names none is 404 (`page:no-entity`).
 */
export const domainPage =
  <K extends string>(kind: K) =>
  (found: RegExpExecArray): { kind: K; domain: string } | NoEntity => {
    const domain = domainIn(found[1]);
    return domain === null ? NO_ENTITY : { kind, domain };
  };

/** `/entity/{domain}`: the canonical page of one entity, asked as a domain query. */
export function entityPage(found: RegExpExecArray): { kind: "entity"; query: DomainQuery } | NoEntity {
  const domain = domainIn(found[1]);
  return domain === null ? NO_ENTITY : { kind: "entity", query: domainQuery(domain) };
}

/**
 * `/issuer/{domain}?after=`: a page of the credentials the index knows a domain issues; with a page
 * link that is not one, HTTP 400 and a link to the first page (`page:bad-issuer-page`).
 */
export function issuerPage(
  found: RegExpExecArray,
  query: URLSearchParams,
): { kind: "issuer"; domain: string; cursor: string | null } | { kind: "bad-issuer-page"; domain: string } | NoEntity {
  const domain = domainIn(found[1]);
  if (domain === null) return NO_ENTITY;
  // An empty `after=` is the first page, as an empty search cursor is.
  const cursor = query.get("after") || null;
  if (cursor !== null && decodeIssuedCursor(cursor) === null) return { kind: "bad-issuer-page", domain };
  return { kind: "issuer", domain, cursor };
}

/**
 * `/search?q=`: with an identifier, a lookup; with other text, a search of the index
 * (docs/decisions.md#search), which fetches nothing; without a valid query, the form again with the
 * reason, as HTTP 400 (`page:bad-query`).
 */
export function searchPage(
  _found: RegExpExecArray,
  query: URLSearchParams,
):
  | { kind: "lookup"; query: Query }
  | { kind: "index-search"; text: string; cursor: string | null }
  | { kind: "bad-query"; q: string; message: string } {
  const q = query.get("q") ?? "";
  const parsed = parseQuery(q);
  if (parsed.ok) return { kind: "lookup", query: parsed.query };
  if (looksLikeIdentifier(q)) return { kind: "bad-query", q, message: parsed.message };
  const text = parseSearchText(q);
  if (!text.ok) return { kind: "bad-query", q, message: text.message };
  const cursor = query.get("cursor");
  if (decodeCursor(cursor) === null) return { kind: "bad-query", q, message: "The page link is not valid; search again" };
  return { kind: "index-search", text: text.text, cursor };
}

/**
 * `/check?q={domain}`: the publisher's check (docs/publishing.md#check), live when its rate limit
 * allows; without a query, the form; with something that is not a domain, the form again with the
 * reason, as HTTP 400 (`page:bad-check`).
 */
export function checkPage(
  _found: RegExpExecArray,
  query: URLSearchParams,
): { kind: "check"; query: DomainQuery } | { kind: "check-form" } | { kind: "bad-check"; q: string; message: string } {
  const q = (query.get("q") ?? "").trim();
  if (q === "") return { kind: "check-form" };
  const parsed = parseQuery(q);
  if (!parsed.ok) return { kind: "bad-check", q, message: parsed.message };
  if (parsed.query.kind === "property_id" || parsed.query.kind === "credential_id") {
    return { kind: "bad-check", q, message: "The check takes the domain of an entity (alice.example), not a property or credential id" };
  }
  return { kind: "check", query: domainQuery(parsed.query.domain) };
}

/**
 * The domain of a badge's path, `/entity/{domain}/badge.svg` (web/badge.ts), read as an entity page's
 * is and lower-cased; null when the path names no domain; undefined for any other path.
 */
export function badgeOf(pathname: string): string | null | undefined {
  const segment = /^\/entity\/([^/]*)\/badge\.svg$/.exec(pathname)?.[1];
  return segment === undefined ? undefined : domainIn(segment);
}

/** Whether the page (a `Page`, web/routes.ts) is a resolver answer (an entity page or a lookup), rather than a form or an error. */
export const isAnswer = <P extends { kind: string }>(page: P | null): page is P & { kind: "entity" | "lookup" } =>
  page?.kind === "entity" || page?.kind === "lookup";

const domainQuery = (domain: string): DomainQuery => ({ input: domain, kind: "domain", domain });

/** The domain a path's segment names (percent-decoded, lower-cased); null when it names none. */
function domainIn(segment: string | undefined): string | null {
  if (segment === undefined) return null;
  let domain: string;
  try {
    domain = decodeURIComponent(segment);
  } catch {
    return null;
  }
  return isDomain(domain) ? domain.toLowerCase() : null;
}
