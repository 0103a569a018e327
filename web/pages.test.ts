/**
 * How a page's path and query are read (web/pages.ts): through the route table, as the server reads
 * them (web/routes.ts `classify`).
 */
import { describe, expect, it } from "vitest";
import { domainPage } from "./pages";
import { classify, type Page } from "./routes";

/** The page a request target is, or null for any other route (the API, feeds, files). */
const pageAt = (target: string): Page | null => {
  const t = classify("GET", target).target;
  return t.kind === "page" ? t.page : null;
};

describe("the page parsers", () => {
  const key = (target: string) => {
    const page = pageAt(target);
    if (page === null) return null;
    if (page.kind === "entity") return `entity:${page.query.domain}`;
    if (page.kind === "lookup") return `search:${page.query.input}`;
    return page.kind;
  };
  it.each([
    ["/entity/Alice.Example", "entity:alice.example"],
    ["/entity/alice.example/", "entity:alice.example"],
    ["/entity/not a domain", "no-entity"],
    ["/entity/%E0%A4%A", "no-entity"],
    ["/entity/", "no-entity"],
    ["/search?q=alice.example", "search:alice.example"],
    ["/search?q=http%3A%2F%2Falice.example", "bad-query"],
    ["/search", "bad-query"],
    ["/search?q=makers+guild&cursor=bogus", "bad-query"],
    ["/search?q=makers+guild", "index-search"],
    ["/?q=alice.example", "home"],
    ["/reasons", "reasons"],
    ["/reasons/", null],
    ["/issuer/Guild.Example", "issuer"],
    ["/issuer/guild.example?after=WzEsImFsaWNlLmV4YW1wbGUiLCJrIl0", "issuer"],
    ["/issuer/guild.example?after=bogus", "bad-issuer-page"],
    ["/issuer/not a domain", "no-entity"],
    ["/check", "check-form"],
    ["/check?q=%20", "check-form"],
    ["/check?q=Alice.Example", "check"],
    ["/check?q=https%3A%2F%2F", "bad-check"],
    ["/entity/alice.example/feed.xml", null],
    ["/api/resolve?q=alice.example", null],
  ])("%s → %s", (target, expected) => {
    expect(key(target)).toBe(expected);
  });
  it("names an issuer's page by its lower-case domain, with the cursor of its page", () => {
    const after = Buffer.from(JSON.stringify([1, "alice.example", "k"])).toString("base64url");
    expect(pageAt(`/issuer/Guild.Example?after=${after}`)).toEqual({ kind: "issuer", domain: "guild.example", cursor: after });
    expect(pageAt("/issuer/Guild.Example")).toEqual({ kind: "issuer", domain: "guild.example", cursor: null });
    expect(pageAt("/issuer/Guild.Example?after=")).toEqual({ kind: "issuer", domain: "guild.example", cursor: null });
  });
  it("names an entity page by its lower-case domain, as a domain query", () => {
    expect(pageAt("/entity/Alice.Example")).toEqual({
      kind: "entity",
      query: { input: "alice.example", kind: "domain", domain: "alice.example" },
    });
  });
  it("refuses a property or credential id to the check, which takes an entity's domain", () => {
    const page = pageAt("/check?q=%C2%A7:property:x.example");
    expect(page?.kind).toBe("bad-check");
    expect(page?.kind === "bad-check" && page.message).toMatch(/domain of an entity/);
  });
  it("reads a page of one domain as an entity page's domain is (the parser a new page of a domain names)", () => {
    const parse = domainPage("members");
    const at = (path: string) => {
      const found = /^\/issuer\/([^/]*)\/members$/.exec(path);
      if (found === null) throw new Error(`not a members page: ${path}`);
      return parse(found);
    };
    expect(at("/issuer/Guild.Example/members")).toEqual({ kind: "members", domain: "guild.example" });
    expect(at("/issuer/guild%2Eexample/members")).toEqual({ kind: "members", domain: "guild.example" });
    expect(at("/issuer/127.0.0.1/members")).toEqual({ kind: "no-entity" });
    expect(at("/issuer/%E0%A4%A/members")).toEqual({ kind: "no-entity" });
  });
});
