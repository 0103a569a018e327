import { describe, expect, it } from "vitest";
import { entityPageKey, fromHeader, pageKeyOf, parsePageKey, searchPageKey, toHeader } from "./page-key";

describe("page keys", () => {
  it("name an entity page by its lower-case domain and a search page by its query", () => {
    expect(parsePageKey(entityPageKey("Alice.Example"))).toEqual({ kind: "entity", domain: "alice.example" });
    expect(parsePageKey(searchPageKey("§:property:x.example"))).toEqual({ kind: "search", q: "§:property:x.example" });
    expect(parsePageKey("other:x")).toBeNull();
  });

  it("travel in a header as ASCII, whatever the query holds", () => {
    const key = searchPageKey("@ü@issuer.example/路径\r\nx-evil: 1");
    const value = toHeader(key);
    expect(() => new Headers({ "x-ident-page": value })).not.toThrow();
    expect(value).toMatch(/^[\x21-\x7e]+$/);
    expect(fromHeader(value)).toBe(key);
  });

  it("read a missing or malformed header as no page", () => {
    expect(fromHeader(null)).toBeNull();
    expect(fromHeader("%E0%A4%A")).toBeNull();
  });
});

describe("pageKeyOf", () => {
  const q = (query: string) => new URLSearchParams(query);
  it.each([
    ["/entity/Alice.Example", "", "entity:alice.example"],
    ["/entity/alice.example/", "", "entity:alice.example"],
    ["/entity/not a domain", "", null],
    ["/entity/%E0%A4%A", "", null],
    ["/entity/", "", null],
    ["/search", "q=alice.example", "search:alice.example"],
    ["/search", "q=http%3A%2F%2Falice.example", null],
    ["/search", "", null],
    ["/", "q=alice.example", null],
  ])("%s?%s → %s", (path, query, expected) => {
    expect(pageKeyOf(path, q(query))).toBe(expected);
  });
});
