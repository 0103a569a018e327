import { describe, expect, it } from "vitest";
import { pageOf } from "./pages";

describe("pageOf", () => {
  const q = (query: string) => new URLSearchParams(query);
  const key = (path: string, query: string) => {
    const page = pageOf(path, q(query));
    if (page === null) return null;
    if (page.kind === "entity") return `entity:${page.query.domain}`;
    if (page.kind === "lookup") return `search:${page.query.input}`;
    return page.kind;
  };
  it.each([
    ["/entity/Alice.Example", "", "entity:alice.example"],
    ["/entity/alice.example/", "", "entity:alice.example"],
    ["/entity/not a domain", "", "no-entity"],
    ["/entity/%E0%A4%A", "", "no-entity"],
    ["/entity/", "", "no-entity"],
    ["/search", "q=alice.example", "search:alice.example"],
    ["/search", "q=http%3A%2F%2Falice.example", "bad-query"],
    ["/search", "", "bad-query"],
    ["/", "q=alice.example", "home"],
    ["/reasons", "", "reasons"],
    ["/issuer/Guild.Example", "", "issuer"],
    ["/issuer/guild.example", "after=WzEsImFsaWNlLmV4YW1wbGUiLCJrIl0", "issuer"],
    ["/issuer/guild.example", "after=bogus", "bad-issuer-page"],
    ["/issuer/not a domain", "", "no-entity"],
    ["/entity/alice.example/feed.xml", "", null],
    ["/api/resolve", "q=alice.example", null],
  ])("%s?%s → %s", (path, query, expected) => {
    expect(key(path, query)).toBe(expected);
  });
  it("names an issuer's page by its lower-case domain, with the cursor of its page", () => {
    const after = Buffer.from(JSON.stringify([1, "alice.example", "k"])).toString("base64url");
    expect(pageOf("/issuer/Guild.Example", q(`after=${after}`))).toEqual({ kind: "issuer", domain: "guild.example", cursor: after });
    expect(pageOf("/issuer/Guild.Example", q(""))).toEqual({ kind: "issuer", domain: "guild.example", cursor: null });
    expect(pageOf("/issuer/Guild.Example", q("after="))).toEqual({ kind: "issuer", domain: "guild.example", cursor: null });
  });
  it("names an entity page by its lower-case domain, as a domain query", () => {
    expect(pageOf("/entity/Alice.Example", q(""))).toEqual({
      kind: "entity",
      query: { input: "alice.example", kind: "domain", domain: "alice.example" },
    });
  });
});
