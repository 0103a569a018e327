/**
 * What a request is, decided once at the front door (docs/architecture.md#one-request-one-decision):
 * `classify` turns a method and a target into a {@link Route}, and everything after it (the front
 * door's methods and body caps, the page cache, shedding, admission, the read pages' rewrite, the page
 * itself, the API) reads that value; nothing below looks at the URL again. A new page or route is
 * taught here, once.
 */
import type { LimitName } from "../lib/traffic/limits";
import { badgeOf, pageCacheUrl, pageOf, statusOf, type Page } from "./pages";

/** What the server does with a request. */
export type Target =
  /** A page Next renders: its admission, status and cache follow from `page`. */
  | { kind: "page"; page: Page }
  /** `/api/…`: answered by web/api.ts, never by Next. */
  | { kind: "api"; path: string; params: URLSearchParams }
  /** `POST /recheck`: the "Re-check now" form (app/recheck/route.ts), a lookup that fetches. */
  | { kind: "recheck" }
  /** `/entity/{domain}/badge.svg`: the entity's badge from the index (web/badge.ts), never by Next; null: not a domain (404). */
  | { kind: "badge"; domain: string | null }
  /** `/healthz`, `/readyz`: answered however busy the instance is. */
  | { kind: "operations" }
  /** Everything else Next answers: its assets, the feeds, sitemaps, robots.txt, schemas, images, or its 404. */
  | { kind: "file" };

export type Route = {
  target: Target;
  /** The request's path and query, parsed once (appended to a fixed origin: `//x` stays a path). */
  url: URL;
  /** The path as sent (still percent-encoded). */
  path: string;
  /** The methods it answers (docs/decisions.md#methods): GET and HEAD, the form's POST, the API's own. */
  methods: readonly string[];
  /** The most body bytes it reads (POST only); null: it takes no body. */
  bodyCap: number | null;
  /** Whether it is a lookup (it may fetch): counted by `lookupsInProgress` and `lookupsInInstance`. */
  lookup: boolean;
  /** A page that is read, not used: it ships without the framework's script (web/script-free.ts). */
  readPage: boolean;
  /** The URL its page cache copy is kept under (the parameters the page reads); null: never kept. */
  cacheUrl: URL | null;
  /** Its status, decided before the first byte: 400 for a bad query, 404 for an entity path that is not a domain. */
  status: number;
  /** The per-client limits each request of it takes at the front door, before it is read (web/shed.ts). */
  limits: readonly RequestLimit[];
  /** What its answers are, so a refusal is in the same form: a page, JSON (the API, feeds, sitemaps), or an image (the badge). */
  answers: "html" | "json" | "svg";
  /** Whether scripts of any origin may read its answers (CORS: the API, the feeds, the badge), its refusals too. */
  cors: boolean;
};

/** The limits a route may name in {@link Route.limits}: per client and per minute, taken once per request. */
export const REQUEST_LIMITS = ["storeReads"] as const satisfies readonly LimitName[];
export type RequestLimit = (typeof REQUEST_LIMITS)[number];

/** The re-check form's body: a domain and its field name (app/recheck/route.ts). */
export const RECHECK_BODY_BYTES = 2048;

const PAGE_METHODS = ["GET", "HEAD"] as const;
const API_METHODS = ["GET", "HEAD", "OPTIONS"] as const;

/** Pages read and not used (no copy buttons, no "try again"): the home page, entity, issuer, search and lookup pages, reasons. */
const READ_PAGE_KINDS: ReadonlySet<Page["kind"]> = new Set([
  "home",
  "reasons",
  "entity",
  "issuer",
  "lookup",
  "index-search",
  "bad-query",
  "no-entity",
]);
/** Pages that may fetch: a lookup and the publisher's live check. */
const LOOKUP_KINDS: ReadonlySet<Page["kind"]> = new Set(["entity", "lookup", "check"]);
/** Pages whose whole render the page cache may keep: the home page and the resolver's answers. */
const CACHED_KINDS: ReadonlySet<Page["kind"]> = new Set(["home", "entity", "lookup"]);

/**
 * docs/architecture.md#traffic, `storeReads`: what reads the index and is not a lookup (a lookup meets
 * the lookups' limits), asked with GET or HEAD: the home page, an issuer's page and a search of the
 * index; the API's search, changes and histories; the badge; and among the files Next answers, the
 * feeds and the sitemaps. A page the page cache answers reads nothing and is not counted.
 */
const STORE_READ_PAGES: ReadonlySet<Page["kind"]> = new Set(["home", "issuer", "index-search"]);
const STORE_READ_API = /^\/api\/(?:search|changes|entity\/[^/]+\/history)$/;
const FEEDS = /^\/(?:changes\.xml|(?:entity|issuer)\/[^/]+\/feed\.xml)$/;
const SITEMAPS = /^\/(?:sitemap\.xml|sitemaps\/[^/]+)$/;
const STORE_READS: readonly RequestLimit[] = ["storeReads"];
const NONE: readonly RequestLimit[] = [];

/** The route of `method` on `target`, an origin-form request target (`/path?query`). */
export function classify(method: string, target: string): Route {
  const url = new URL(`http://route.invalid${target.startsWith("/") ? target : `/${target}`}`);
  const at = target.indexOf("?");
  const path = at < 0 ? target : target.slice(0, at);
  // Another method reads nothing: a preflight is answered, anything else refused (405).
  const reads = (read: boolean) => (read && (method === "GET" || method === "HEAD") ? STORE_READS : NONE);
  const base = {
    url,
    path,
    bodyCap: null,
    lookup: false,
    readPage: false,
    cacheUrl: null,
    status: 200,
    limits: NONE,
    answers: "html" as Route["answers"],
    cors: false,
  };
  if (path.startsWith("/api/")) {
    const t: Target = { kind: "api", path, params: url.searchParams };
    const limits = reads(STORE_READ_API.test(path));
    return Object.assign(base, {
      target: t,
      methods: API_METHODS,
      lookup: path === "/api/resolve",
      limits,
      answers: "json" as const,
      cors: true,
    });
  }
  if (path === "/recheck") {
    return Object.assign(base, { target: { kind: "recheck" } as Target, methods: ["POST"], bodyCap: RECHECK_BODY_BYTES, lookup: true });
  }
  if (path === "/healthz" || path === "/readyz")
    return Object.assign(base, { target: { kind: "operations" } as Target, methods: PAGE_METHODS });
  // docs/api.md#badges: read, not a lookup; never page-cached; 404 when the path names no domain.
  const badge = badgeOf(url.pathname);
  if (badge !== undefined) {
    const t: Target = { kind: "badge", domain: badge };
    return Object.assign(base, {
      target: t,
      methods: PAGE_METHODS,
      status: badge === null ? 404 : 200,
      limits: reads(badge !== null),
      answers: "svg" as const,
      cors: true,
    });
  }
  const page = pageOf(url.pathname, url.searchParams);
  if (page === null) {
    const t: Target = { kind: "file" };
    const feed = FEEDS.test(url.pathname);
    const read = feed || SITEMAPS.test(url.pathname);
    return Object.assign(base, {
      target: t,
      methods: PAGE_METHODS,
      limits: reads(read),
      answers: read ? ("json" as const) : ("html" as const),
      cors: feed,
    });
  }
  const cached = method === "GET" && CACHED_KINDS.has(page.kind);
  return {
    target: { kind: "page", page },
    url,
    path,
    methods: PAGE_METHODS,
    bodyCap: null,
    lookup: LOOKUP_KINDS.has(page.kind),
    readPage: READ_PAGE_KINDS.has(page.kind),
    cacheUrl: cached ? pageCacheUrl(url) : null,
    status: statusOf(page),
    limits: reads(STORE_READ_PAGES.has(page.kind)),
    answers: "html",
    cors: false,
  };
}
