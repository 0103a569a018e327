/**
 * What a request is, decided once (web/routes.ts, docs/architecture.md#one-request-one-decision):
 * every fact the rest of the server reads of a route, for each kind of request.
 */
import { describe, expect, it } from "vitest";
import { classify } from "./routes";

describe("classify", () => {
  it.each([
    // target, kind (page kind), methods, lookup, readPage, cached, status
    ["/", "page:home", "GET, HEAD", false, true, true, 200],
    ["/entity/Alice.Example", "page:entity", "GET, HEAD", true, true, true, 200],
    ["/entity/not a domain", "page:no-entity", "GET, HEAD", false, true, false, 404],
    ["/search?q=alice.example", "page:lookup", "GET, HEAD", true, true, true, 200],
    ["/search?q=makers+guild", "page:index-search", "GET, HEAD", false, true, false, 200],
    ["/search?q=http%3A%2F%2Falice.example", "page:bad-query", "GET, HEAD", false, true, false, 400],
    ["/issuer/guild.example", "page:issuer", "GET, HEAD", false, true, false, 200],
    ["/reasons", "page:reasons", "GET, HEAD", false, true, false, 200],
    ["/check?q=alice.example", "page:check", "GET, HEAD", true, false, false, 200],
    ["/check", "page:check-form", "GET, HEAD", false, false, false, 200],
    ["/check?q=§:property:x.example", "page:bad-check", "GET, HEAD", false, false, false, 400],
    ["/api/resolve?q=alice.example", "api", "GET, HEAD, OPTIONS", true, false, false, 200],
    ["/api/search?q=alice", "api", "GET, HEAD, OPTIONS", false, false, false, 200],
    ["/recheck", "recheck", "POST", true, false, false, 200],
    ["/healthz", "operations", "GET, HEAD", false, false, false, 200],
    ["/entity/Alice.Example/badge.svg", "badge", "GET, HEAD", false, false, false, 200],
    ["/entity/not%20a%20domain/badge.svg", "badge", "GET, HEAD", false, false, false, 404],
    ["/entity/alice.example/feed.xml", "file", "GET, HEAD", false, false, false, 200],
    ["/entity/alice.example/preview.png", "file", "GET, HEAD", false, false, false, 200],
    ["/_next/static/x.js", "file", "GET, HEAD", false, false, false, 200],
    ["/sitemap.xml", "file", "GET, HEAD", false, false, false, 200],
  ])("%s → %s", (target, kind, methods, lookup, readPage, cached, status) => {
    const route = classify("GET", target);
    const t = route.target;
    expect(t.kind === "page" ? `page:${t.page.kind}` : t.kind).toBe(kind);
    expect(route.methods.join(", ")).toBe(methods);
    expect({ lookup: route.lookup, readPage: route.readPage, cached: route.cacheUrl !== null, status: route.status }).toEqual({
      lookup,
      readPage,
      cached,
      status,
    });
  });
  it("only the re-check's route reads a body, and only so much", () => {
    expect(classify("POST", "/recheck").bodyCap).toBe(2048);
    expect(classify("POST", "/search").bodyCap).toBeNull();
    expect(classify("POST", "/api/resolve").bodyCap).toBeNull();
  });
  it("keeps a page by the parameters it reads, in one order; a HEAD or any other method is never kept", () => {
    expect(classify("GET", "/entity/alice.example?x=1&recheck=busy")?.cacheUrl?.search).toBe("?recheck=busy");
    expect(classify("GET", "/search?utm=1&q=alice.example")?.cacheUrl?.search).toBe("?q=alice.example");
    expect(classify("GET", "/?x=1")?.cacheUrl?.search).toBe("");
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
    expect(route.target.kind).toBe("file");
  });
});
