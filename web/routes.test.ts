/**
 * What a request is, decided once (web/routes.ts, docs/architecture.md#one-request-one-decision):
 * every fact the rest of the server reads of a route, for each kind of request.
 */
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { documentedRouteTable, routeTableRows } from "./route-table";
import { classify, ROUTES, type RouteKind } from "./routes";

describe("classify", () => {
  it.each([
    // target, kind, methods, lookup, scriptFree, cached, status
    ["/", "page:home", "GET, HEAD", false, true, true, 200],
    ["/entity/Alice.Example", "page:entity", "GET, HEAD", true, true, true, 200],
    ["/entity/not a domain", "page:no-entity", "GET, HEAD", false, true, false, 404],
    ["/issuer/x", "page:no-entity", "GET, HEAD", false, true, false, 404],
    ["/search?q=alice.example", "page:lookup", "GET, HEAD", true, true, true, 200],
    ["/search?q=makers+guild", "page:index-search", "GET, HEAD", false, true, false, 200],
    ["/search?q=http%3A%2F%2Falice.example", "page:bad-query", "GET, HEAD", false, true, false, 400],
    ["/issuer/guild.example", "page:issuer", "GET, HEAD", false, true, true, 200],
    ["/issuer/guild.example?after=x", "page:bad-issuer-page", "GET, HEAD", false, true, false, 400],
    ["/reasons", "page:reasons", "GET, HEAD", false, true, false, 200],
    ["/check?q=alice.example", "page:check", "GET, HEAD", true, false, false, 200],
    ["/check", "page:check-form", "GET, HEAD", false, false, false, 200],
    ["/check?q=§:property:x.example", "page:bad-check", "GET, HEAD", false, false, false, 400],
    ["/api/resolve?q=alice.example", "api:resolve", "GET, HEAD, OPTIONS", true, false, false, 200],
    ["/api/search?q=alice", "api:search", "GET, HEAD, OPTIONS", false, false, false, 200],
    ["/api/entity/alice.example/history", "api:history", "GET, HEAD, OPTIONS", false, false, false, 200],
    ["/api/nothing/here", "api:unknown", "GET, HEAD, OPTIONS", false, false, false, 404],
    ["/recheck", "recheck", "POST", true, false, false, 200],
    ["/healthz", "healthz", "GET, HEAD", false, false, false, 200],
    ["/entity/Alice.Example/badge.svg", "badge", "GET, HEAD", false, false, false, 200],
    ["/entity/not%20a%20domain/badge.svg", "badge:no-domain", "GET, HEAD", false, false, false, 404],
    ["/entity/alice.example/feed.xml", "feed:entity", "GET, HEAD", false, false, false, 200],
    ["/entity/alice.example/preview.png", "preview:entity", "GET, HEAD", false, false, false, 200],
    ["/_next/static/x.js", "next", "GET, HEAD", false, false, false, 200],
    ["/sitemap.xml", "sitemap:index", "GET, HEAD", false, false, false, 200],
    ["/sitemaps/entities-1.xml", "sitemap:file", "GET, HEAD", false, false, false, 200],
  ])("%s → %s", (target, kind, methods, lookup, scriptFree, cached, status) => {
    const route = classify("GET", target);
    expect(route.kind).toBe(kind);
    expect(route.row.methods.join(", ")).toBe(methods);
    const seen = { lookup: route.lookup, scriptFree: route.row.scriptFree, cached: route.cacheUrl !== null, status: route.row.status };
    expect(seen).toEqual({ lookup, scriptFree, cached, status });
  });
  it("only the re-check's route reads a body, and only so much", () => {
    expect(classify("POST", "/recheck").row.bodyCap).toBe(2048);
    expect(classify("POST", "/search").row.bodyCap).toBeNull();
    expect(classify("POST", "/api/resolve").row.bodyCap).toBeNull();
  });
  it("keeps a page by the parameters it reads, in one order; a HEAD or any other method is never kept", () => {
    expect(classify("GET", "/entity/alice.example?x=1&recheck=busy")?.cacheUrl?.search).toBe("?recheck=busy");
    expect(classify("GET", "/search?utm=1&q=alice.example")?.cacheUrl?.search).toBe("?q=alice.example");
    expect(classify("GET", "/?x=1")?.cacheUrl?.search).toBe("");
    expect(classify("GET", "/issuer/guild.example?utm=1")?.cacheUrl?.search).toBe("");
    expect(classify("HEAD", "/entity/alice.example").cacheUrl).toBeNull();
  });
  it("reads a badge's domain as an entity page's, lower-cased; null when the path names none", () => {
    const domainOf = (target: string) => {
      const t = classify("GET", target).target;
      return t.kind === "badge" ? t.domain : "not a badge";
    };
    expect(domainOf("/entity/Alice.Example/badge.svg?v=1")).toBe("alice.example");
    expect(domainOf("/entity/alice%2Eexample/badge.svg")).toBe("alice.example");
    expect(domainOf("/entity//badge.svg")).toBeNull();
    expect(domainOf("/entity/127.0.0.1/badge.svg")).toBeNull();
    expect(domainOf("/entity/alice.example/badge.png")).toBe("not a badge");
    expect(domainOf("/issuer/alice.example/badge.svg")).toBe("not a badge");
  });
  it("parses a path that is not a URL of its own as a path (`//host/x`), never another host", () => {
    const route = classify("GET", "//evil.example/entity/a.example");
    expect(route.url.host).toBe("route.invalid");
    expect(route.kind).toBe("next");
  });
});

describe("the route table", () => {
  const rows = Object.entries(ROUTES) as [RouteKind, (typeof ROUTES)[RouteKind]][];
  it.each(rows)("%s: its example is classified to it", (kind, row) => {
    expect(classify(row.methods[0] ?? "GET", row.example).kind).toBe(kind);
  });
  it("finds a row by its own match: a pattern row's example by its pattern and no other row's before it", () => {
    const patterned = rows.filter(([, row]) => row.match instanceof RegExp);
    expect(patterned.length).toBeGreaterThan(20);
    for (const [kind, row] of patterned) {
      const path = new URL(row.example, "http://x.invalid").pathname;
      const first = patterned.find(([, other]) => (other.match as RegExp).test(path));
      expect(first?.[0], row.example).toBe(kind);
    }
    // What no row's match takes: the API's last resort, and Next's.
    expect(classify("GET", "/api/entity/a.example/history/x").kind).toBe("api:unknown");
    expect(classify("GET", "/entity/a.example/nothing.txt").kind).toBe("next");
  });
  it("finds a page row without a pattern through the parsers it names (`by`), each parser's answers named, and only page rows have parsers", () => {
    const parsers = rows.filter(([, row]) => row.parse !== undefined && row.match instanceof RegExp);
    const byOf = (kind: RouteKind) => {
      const match = ROUTES[kind].match;
      return typeof match === "object" && "by" in match ? match.by : [];
    };
    // Each row's example, and each parser's example with its path's domain replaced by one that is not.
    const probes = rows.flatMap(([, row]) => [row.example, row.example.replace(/^(\/\w+\/)[^/?]+/, "$1not%20a%20domain")]);
    let answered = 0;
    for (const target of probes) {
      const path = new URL(target, "http://x.invalid").pathname;
      const parser = parsers.find(([, row]) => (row.match as RegExp).test(path))?.[0];
      if (parser === undefined) continue;
      const kind = classify("GET", target).kind;
      answered++;
      // A parser answers its own row's kind, or a row that names it in `by`.
      expect(kind === parser || (byOf(kind) as readonly string[]).includes(parser), `${target}: ${parser} answered ${kind}`).toBe(true);
    }
    expect(answered).toBeGreaterThan(15);
    for (const [kind] of rows)
      for (const by of byOf(kind))
        expect(
          parsers.map(([r]) => r),
          kind,
        ).toContain(by);
    for (const [kind, row] of rows) expect(row.parse === undefined || kind.startsWith("page:"), kind).toBe(true);
  });
  /** Every file under app/, its path from the project's root. */
  const appFiles = (dir = "app"): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? appFiles(path) : [relative(process.cwd(), path)];
    });
  const ROUTE_FILE = /(^|\/)(page\.tsx|route\.ts|not-found\.tsx)$/;
  it("has a row for every page and route file under app/, and names no file that is not there (the two routers cannot drift)", () => {
    const files = appFiles().filter((f) => ROUTE_FILE.test(f));
    const named = new Set(rows.flatMap(([, row]) => (typeof row.handler === "object" ? [row.handler.next] : [])));
    expect([...named].sort()).toEqual(files.sort());
  });
  it("accounts for every other file under app/: Next's layout, error page and stylesheet, and its metadata files, answered by the `next` row", () => {
    const others = appFiles()
      .filter((f) => !ROUTE_FILE.test(f))
      .map((f) => relative("app", f));
    // Not routes: what every page is rendered in.
    const rendering = new Set(["layout.tsx", "error.tsx", "globals.css"]);
    // Next's metadata files (icon, apple-icon, favicon) are served at their own path at app/'s root.
    const metadata = others.filter((f) => !rendering.has(f));
    for (const file of metadata) {
      expect(file, "a metadata file at app/'s root").toMatch(/^(icon|apple-icon|favicon)\.(svg|png|ico)$/);
      expect(classify("GET", `/${file}`).kind, file).toBe("next");
    }
    expect(metadata.length).toBeGreaterThan(0);
  });
  it("takes a row's limits on a read only: a POST or an OPTIONS spends nothing", () => {
    expect(classify("GET", "/api/search?q=a").limits).toEqual(["storeReads"]);
    expect(classify("OPTIONS", "/api/search?q=a").limits).toEqual([]);
    expect(classify("POST", "/entity/a.example/badge.svg").limits).toEqual([]);
  });
  it("is the table docs/architecture.md#routes shows, cell for cell (`npm run docs:routes` writes it)", () => {
    const doc = readFileSync(new URL("../docs/architecture.md", import.meta.url), "utf8");
    expect(documentedRouteTable(doc)).toEqual(routeTableRows());
  });
});
