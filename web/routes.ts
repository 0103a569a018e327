/**
 * The route table (docs/architecture.md#routes): one row per route, declaring what a request of it is,
 * which limits it meets and how it is answered. `classify` finds a request's row once, at the front
 * door, and everything after it (the front door's methods and body caps, the page cache's key and
 * version, the per-client limits, shedding, admission, the read pages' rewrite, the refusal's form,
 * the page itself, the API) reads the {@link Route} made from it; nothing below looks at the URL
 * again. A new route is one row here (and its handler: for a page, its file under `app/`); the type
 * refuses a page kind a row's parser answers without its own row, and web/routes.test.ts fails when
 * an `app/` file has no row or a row names a file that is not there.
 */
import type { LimitName } from "ident-resolver/traffic";
import { badgeOf, checkPage, entityPage, issuerPage, plainPage, searchPage } from "./pages";

/** What a route is, in the words of docs/architecture.md#routes. */
export type RouteIs = "read page" | "form" | "lookup" | "search" | "feed" | "file" | "operator" | "api";

/**
 * How a route's answers are sent, its refusals included: the body's form (a page, JSON, a badge)
 * and whether scripts of any origin may read them (CORS).
 */
export const PROFILES = {
  page: { answers: "html", cors: false },
  api: { answers: "json", cors: true },
  feed: { answers: "json", cors: true },
  sitemap: { answers: "json", cors: false },
  badge: { answers: "svg", cors: true },
  file: { answers: "html", cors: false },
} as const satisfies Record<string, { answers: "html" | "json" | "svg"; cors: boolean }>;
export type Profile = keyof typeof PROFILES;

/** The limits a route may name in {@link RouteRow.limits}: per client and per minute, taken once per request. */
export const REQUEST_LIMITS = ["storeReads"] as const satisfies readonly LimitName[];
export type RequestLimit = (typeof REQUEST_LIMITS)[number];

/** What a client past each of them is told (the refusal's message), given the limit and when to try again: one for each, or the type refuses. */
export const REQUEST_LIMIT_WORDS: Record<RequestLimit, (limit: number, retryAfterS: number) => string> = {
  storeReads: (limit, retryAfterS) =>
    `you have read this resolver's index ${limit} times this minute, as often as one client may; lookups of a domain still work; try again in ${retryAfterS} s`,
};

export type RouteRow = {
  /** The path it answers, as the table shows it (each row's `example` is checked to match it). */
  path: string;
  /**
   * How a request finds it: a pattern of its path (as sent, for the API; parsed, for the rest), tried
   * in the table's order; `by`: the page rows whose parsers answer it (a bad query, a path naming no
   * domain); the badge's parser (`badgeOf`, web/pages.ts); or `otherwise`, what answers a path no
   * other row takes.
   */
  match: RegExp | { by: readonly `page:${string}`[] } | "badgeOf" | "otherwise";
  /**
   * A page row's parser (web/pages.ts): what its pattern matched and the query in, the page out, of
   * its own kind or of a row that names it in `by`. The `Page` type is made from the parsers.
   */
  parse?: PageParser;
  /** A request target this row answers, for the table's test. */
  example: string;
  /** What it is. */
  is: RouteIs;
  /** The methods it answers (docs/decisions.md#methods); any other is 405 at the front door (the API answers its own). */
  methods: readonly string[];
  /** The most body bytes it reads (a POST); null: it takes no body. */
  bodyCap: number | null;
  /** Its status, decided before the first byte (a bad query's 400, a path naming no domain's 404). */
  status: number;
  /** The query parameters it reads: the page cache's key (docs/decisions.md#page-cache); null: never kept whole. */
  params: readonly string[] | null;
  /**
   * What its cached copy is current against (web/page-version.ts): the index's overview, the
   * resolver's answer, or the first page of an issuer's credentials as the index lists them.
   */
  version: "overview" | "answer" | "issued" | null;
  /** Its admission (web/admission.ts): a lookup (may fetch), the check (a lookup that always asks a refresh), or a search of the index. */
  admission: "lookup" | "check" | "search" | null;
  /** The per-client limits each GET or HEAD of it takes before it is counted in (web/shed.ts). */
  limits: readonly RequestLimit[];
  /** How its answers and refusals are sent ({@link PROFILES}). */
  profile: Profile;
  /** A page that is read, not used: sent without the framework's script (web/script-free.ts). */
  scriptFree: boolean;
  /** What answers it: Next (the file under `app/` named here), or the server without Next: the API, the badge, the re-check. */
  handler: { next: string } | "web/api.ts" | "web/badge.ts" | "web/recheck.ts" | "web/notices.ts";
};

/** The re-check form's body: a domain and its field name (web/recheck.ts). */
export const RECHECK_BODY_BYTES = 2048;
/** A new webhook's body: its URL and topic (web/notices.ts). */
export const WEBHOOK_BODY_BYTES = 4096;
/** A WebSub request's form: a topic, a callback, a lease and a secret (web/notices.ts). */
export const HUB_BODY_BYTES = 8192;

/** A page row's parser: {@link RouteRow.parse}. */
type PageParser = (found: RegExpExecArray, query: URLSearchParams) => { kind: string };

const GET = ["GET", "HEAD"] as const;
const API = ["GET", "HEAD", "OPTIONS"] as const;
const READS = ["storeReads"] as const;
const ENTITY_PARAMS = ["refresh", "recheck", "retry", "partly", "rechecked"] as const;

/** A row's own fields: only a page row has a parser ({@link page}), whose type `Page` is made from. */
type RowFields = Pick<RouteRow, "path" | "match" | "example" | "is"> & Omit<Partial<RouteRow>, "parse">;

/** Defaults of a row: a GET answered by Next, read by nothing, never kept, no admission, no limit. */
const row = (r: RowFields & Pick<RouteRow, "handler">): RouteRow => ({
  methods: GET,
  bodyCap: null,
  status: 200,
  params: null,
  version: null,
  admission: null,
  limits: [],
  profile: "file",
  scriptFree: false,
  ...r,
});
/** A page Next renders from `app/{file}`, script-free; its parser's type is kept, for `Page`. */
const page = <R extends RowFields & Pick<RouteRow, "parse">>(file: string, r: R): Omit<RouteRow, keyof NoInfer<R>> & NoInfer<R> =>
  Object.assign(row({ handler: { next: `app/${file}` }, profile: "page", scriptFree: true, ...r }), r);
const api = (r: RowFields): RouteRow => row({ handler: "web/api.ts", methods: API, profile: "api", ...r });

/**
 * The table. Store reads (`storeReads`, docs/architecture.md#traffic) are everything answered from the
 * index that is not a lookup (a lookup meets the lookups' limits); a page the page cache answers reads
 * nothing and is not counted.
 */
const TABLE = {
  "page:home": page("page.tsx", {
    path: "/",
    match: /^\/$/,
    parse: plainPage("home"),
    example: "/",
    is: "read page",
    params: [],
    version: "overview",
    limits: READS,
  }),
  "page:reasons": page("reasons/page.tsx", {
    path: "/reasons",
    match: /^\/reasons$/,
    parse: plainPage("reasons"),
    example: "/reasons",
    is: "read page",
  }),
  "page:entity": page("entity/[domain]/page.tsx", {
    path: "/entity/{domain}",
    match: /^\/entity\/([^/]*)\/?$/,
    parse: entityPage,
    example: "/entity/alice.example",
    is: "lookup",
    params: ENTITY_PARAMS,
    version: "answer",
    admission: "lookup",
  }),
  "page:no-entity": page("entity/[domain]/page.tsx", {
    path: "/entity/{not a domain}, /issuer/{not a domain}",
    match: { by: ["page:entity", "page:issuer"] },
    example: "/entity/not%20a%20domain",
    is: "read page",
    status: 404,
  }),
  "page:lookup": page("search/page.tsx", {
    path: "/search?q={identifier}",
    match: /^\/search$/,
    parse: searchPage,
    example: "/search?q=alice.example",
    is: "lookup",
    params: ["q", "cursor", "refresh"],
    version: "answer",
    admission: "lookup",
  }),
  "page:index-search": page("search/page.tsx", {
    path: "/search?q={words}",
    match: { by: ["page:lookup"] },
    example: "/search?q=makers+guild",
    is: "search",
    admission: "search",
    limits: READS,
  }),
  "page:bad-query": page("search/page.tsx", {
    path: "/search?q={not valid}",
    match: { by: ["page:lookup"] },
    example: "/search?q=%20",
    is: "read page",
    status: 400,
  }),
  "page:issuer": page("issuer/[domain]/page.tsx", {
    path: "/issuer/{domain}?after={cursor}",
    match: /^\/issuer\/([^/]*)\/?$/,
    parse: issuerPage,
    example: "/issuer/guild.example",
    is: "read page",
    params: ["after"],
    version: "issued",
    limits: READS,
  }),
  "page:bad-issuer-page": page("issuer/[domain]/page.tsx", {
    path: "/issuer/{domain}?after={not a cursor}",
    match: { by: ["page:issuer"] },
    example: "/issuer/guild.example?after=x",
    is: "read page",
    status: 400,
  }),
  "page:check": page("check/page.tsx", {
    path: "/check?q={domain}",
    match: /^\/check$/,
    parse: checkPage,
    example: "/check?q=alice.example",
    is: "lookup",
    admission: "check",
    scriptFree: false,
  }),
  "page:check-form": page("check/page.tsx", {
    path: "/check",
    match: { by: ["page:check"] },
    example: "/check",
    is: "form",
    scriptFree: false,
  }),
  "page:bad-check": page("check/page.tsx", {
    path: "/check?q={not a domain}",
    match: { by: ["page:check"] },
    example: "/check?q=%C2%A7:property:x.example",
    is: "form",
    status: 400,
    scriptFree: false,
  }),
  "api:resolve": api({
    path: "/api/resolve",
    match: /^\/api\/resolve$/,
    example: "/api/resolve?q=alice.example",
    is: "lookup",
    admission: "lookup",
  }),
  "api:search": api({
    path: "/api/search",
    match: /^\/api\/search$/,
    example: "/api/search?q=alice",
    is: "search",
    admission: "search",
    limits: READS,
  }),
  "api:changes": api({
    path: "/api/changes",
    match: /^\/api\/changes$/,
    example: "/api/changes",
    is: "search",
    admission: "search",
    limits: READS,
  }),
  "api:history": api({
    path: "/api/entity/{domain}/history",
    match: /^\/api\/entity\/[^/]+\/history$/,
    example: "/api/entity/alice.example/history",
    is: "api",
    limits: READS,
  }),
  "api:openapi": api({ path: "/api/openapi.json", match: /^\/api\/openapi\.json$/, example: "/api/openapi.json", is: "file" }),
  "api:webhooks": api({
    path: "/api/webhooks",
    match: /^\/api\/webhooks$/,
    example: "/api/webhooks",
    is: "form",
    methods: ["POST", "OPTIONS"],
    bodyCap: WEBHOOK_BODY_BYTES,
    handler: "web/notices.ts",
  }),
  "api:webhook": api({
    path: "/api/webhooks/{id}",
    match: /^\/api\/webhooks\/[^/]+$/,
    example: "/api/webhooks/wh_x",
    is: "api",
    methods: ["GET", "HEAD", "DELETE", "OPTIONS"],
    handler: "web/notices.ts",
    limits: READS,
  }),
  "api:webhook-test": api({
    path: "/api/webhooks/{id}/test",
    match: /^\/api\/webhooks\/[^/]+\/test$/,
    example: "/api/webhooks/wh_x/test",
    is: "form",
    methods: ["POST", "OPTIONS"],
    bodyCap: 0,
    handler: "web/notices.ts",
  }),
  "api:unknown": api({ path: "/api/{anything else}", match: "otherwise", example: "/api/nothing", is: "api", status: 404 }),
  badge: row({
    path: "/entity/{domain}/badge.svg",
    match: "badgeOf",
    example: "/entity/alice.example/badge.svg",
    is: "file",
    handler: "web/badge.ts",
    profile: "badge",
    limits: READS,
  }),
  "badge:no-domain": row({
    path: "/entity/{not a domain}/badge.svg",
    match: "badgeOf",
    example: "/entity/not%20a%20domain/badge.svg",
    is: "file",
    handler: "web/badge.ts",
    profile: "badge",
    status: 404,
  }),
  recheck: row({
    path: "/recheck",
    match: /^\/recheck$/,
    example: "/recheck",
    is: "lookup",
    handler: "web/recheck.ts",
    methods: ["POST"],
    bodyCap: RECHECK_BODY_BYTES,
    // A lookup that always asks a refresh, as the check page's (docs/publishing.md#re-check-now).
    admission: "check",
  }),
  healthz: row({ path: "/healthz", match: /^\/healthz$/, example: "/healthz", is: "operator", handler: { next: "app/healthz/route.ts" } }),
  readyz: row({ path: "/readyz", match: /^\/readyz$/, example: "/readyz", is: "operator", handler: { next: "app/readyz/route.ts" } }),
  "feed:changes": row({
    path: "/changes.xml",
    match: /^\/changes\.xml$/,
    example: "/changes.xml",
    is: "feed",
    handler: { next: "app/changes.xml/route.ts" },
    profile: "feed",
    admission: "search",
    limits: READS,
  }),
  "feed:entity": row({
    path: "/entity/{domain}/feed.xml",
    match: /^\/entity\/[^/]+\/feed\.xml$/,
    example: "/entity/alice.example/feed.xml",
    is: "feed",
    handler: { next: "app/entity/[domain]/feed.xml/route.ts" },
    profile: "feed",
    admission: "search",
    limits: READS,
  }),
  "feed:issuer": row({
    path: "/issuer/{domain}/feed.xml",
    match: /^\/issuer\/[^/]+\/feed\.xml$/,
    example: "/issuer/guild.example/feed.xml",
    is: "feed",
    handler: { next: "app/issuer/[domain]/feed.xml/route.ts" },
    profile: "feed",
    admission: "search",
    limits: READS,
  }),
  hub: row({
    path: "/hub",
    match: /^\/hub$/,
    example: "/hub",
    is: "form",
    methods: ["POST"],
    bodyCap: HUB_BODY_BYTES,
    handler: "web/notices.ts",
    profile: "api",
  }),
  "sitemap:index": row({
    path: "/sitemap.xml",
    match: /^\/sitemap\.xml$/,
    example: "/sitemap.xml",
    is: "feed",
    handler: { next: "app/sitemap.xml/route.ts" },
    profile: "sitemap",
    admission: "search",
    limits: READS,
  }),
  "sitemap:file": row({
    path: "/sitemaps/{file}",
    match: /^\/sitemaps\/[^/]+$/,
    example: "/sitemaps/entities-1.xml",
    is: "feed",
    handler: { next: "app/sitemaps/[file]/route.ts" },
    profile: "sitemap",
    admission: "search",
    limits: READS,
  }),
  "preview:site": row({
    path: "/preview.png",
    match: /^\/preview\.png$/,
    example: "/preview.png",
    is: "file",
    handler: { next: "app/preview.png/route.ts" },
  }),
  "preview:entity": row({
    path: "/entity/{domain}/preview.png",
    match: /^\/entity\/[^/]+\/preview\.png$/,
    example: "/entity/alice.example/preview.png",
    is: "file",
    handler: { next: "app/entity/[domain]/preview.png/route.ts" },
    // Drawn from the cache alone, annotated from the index for an accepted entity (web/preview-image.ts).
    limits: READS,
  }),
  schema: row({
    path: "/schemas/{file}",
    match: /^\/schemas\/[^/]+$/,
    example: "/schemas/entity.json",
    is: "file",
    handler: { next: "app/schemas/[file]/route.ts" },
  }),
  robots: row({
    path: "/robots.txt",
    match: /^\/robots\.txt$/,
    example: "/robots.txt",
    is: "file",
    handler: { next: "app/robots.txt/route.ts" },
  }),
  next: row({
    path: "anything else: Next's assets, icons, its 404",
    match: "otherwise",
    example: "/_next/static/x.js",
    is: "file",
    handler: { next: "app/not-found.tsx" },
  }),
} satisfies Record<string, RouteRow>;

/** The table, read only. */
export const ROUTES: Readonly<typeof TABLE> = TABLE;

/** Every route there is: one per page kind, API route, feed, sitemap, image, file and operator route. */
export type RouteKind = keyof typeof ROUTES;

/**
 * A page, as the server and the page read it: what the page rows' parsers answer (web/pages.ts),
 * one shape per page kind.
 */
export type Page = {
  [K in RouteKind]: (typeof ROUTES)[K] extends { parse: (...args: never[]) => infer P } ? P : never;
}[RouteKind];

/** What the server does with a request: its row's kind, and what the matching read from the URL. */
export type Target =
  /** A page Next renders. */
  | { kind: "page"; page: Page }
  /** `/api/…`: answered by web/api.ts, never by Next. */
  | { kind: "api"; path: string; params: URLSearchParams }
  /** `/entity/{domain}/badge.svg`: the entity's badge from the index (web/badge.ts), never by Next; null: not a domain (404). */
  | { kind: "badge"; domain: string | null }
  /** Everything else: what its row's handler answers (Next's route handlers, files and 404; the re-check). */
  | { kind: "file" };

export type Route = {
  /** Its row's name in {@link ROUTES}. */
  kind: RouteKind;
  /** Its row: everything the server does with it. */
  row: RouteRow;
  target: Target;
  /** The request's path and query, parsed once (appended to a fixed origin: `//x` stays a path). */
  url: URL;
  /** The path as sent (still percent-encoded). */
  path: string;
  /** Whether it is a lookup (it may fetch): counted by `lookupsInProgress` and `lookupsInInstance`. */
  lookup: boolean;
  /** The URL its page cache copy is kept under (its row's `params`, for a GET); null: never kept. */
  cacheUrl: URL | null;
  /** The per-client limits this request takes: its row's, for a GET or HEAD (another method reads nothing). */
  limits: readonly RequestLimit[];
};

/** The rows a pattern finds, in the table's order: the API's (matched on the path as sent), then the rest. */
const PATTERNS = (Object.entries(ROUTES) as [RouteKind, RouteRow][]).flatMap(([kind, r]) =>
  r.match instanceof RegExp ? [{ kind, pattern: r.match, parse: r.parse }] : [],
);
const API_PATTERNS = PATTERNS.filter((p) => p.kind.startsWith("api:"));
const OTHER_PATTERNS = PATTERNS.filter((p) => !p.kind.startsWith("api:"));

/** The row and target of a path (`path`: as sent; `url`: parsed). */
function match(path: string, url: URL): { kind: RouteKind; target: Target } {
  if (path.startsWith("/api/")) return { kind: apiRouteOf(path), target: { kind: "api", path, params: url.searchParams } };
  // docs/api.md#badges: read as an entity page's domain is; 404 when the path names none.
  const badge = badgeOf(url.pathname);
  if (badge !== undefined) return { kind: badge === null ? "badge:no-domain" : "badge", target: { kind: "badge", domain: badge } };
  for (const { kind, pattern, parse } of OTHER_PATTERNS) {
    const found = pattern.exec(url.pathname);
    if (found === null) continue;
    if (parse === undefined) return { kind, target: { kind: "file" } };
    // A parser answers a `Page` (the type is made from the parsers; the table's test tries each row's
    // example), and every kind it answers has its row, `page:{kind}`: the type refuses one without.
    const page = parse(found, url.searchParams) as Page;
    return { kind: `page:${page.kind}`, target: { kind: "page", page } };
  }
  return { kind: "next", target: { kind: "file" } };
}

/** The row of an API path (as sent): web/api.ts answers by it too. */
export function apiRouteOf(path: string): RouteKind {
  return API_PATTERNS.find((p) => p.pattern.test(path))?.kind ?? "api:unknown";
}

/** The route of `method` on `target`, an origin-form request target (`/path?query`). */
export function classify(method: string, target: string): Route {
  const url = new URL(`http://route.invalid${target.startsWith("/") ? target : `/${target}`}`);
  const at = target.indexOf("?");
  const path = at < 0 ? target : target.slice(0, at);
  const { kind, target: t } = match(path, url);
  const row = ROUTES[kind];
  const reads = method === "GET" || method === "HEAD";
  return {
    kind,
    row,
    target: t,
    url,
    path,
    lookup: row.admission === "lookup" || row.admission === "check",
    cacheUrl: method === "GET" && row.params !== null ? cacheUrlOf(url, row.params) : null,
    limits: reads ? row.limits : [],
  };
}

/**
 * `url` as its page reads it (docs/decisions.md#page-cache): its path and only the parameters the
 * page reads, in one order, so `?x=1`, `?x=2`, … are one page, not a new copy each.
 */
function cacheUrlOf(url: URL, params: readonly string[]): URL {
  const canonical = new URL(url.pathname, url.origin);
  for (const name of params) for (const value of url.searchParams.getAll(name)) canonical.searchParams.append(name, value);
  return canonical;
}
