import { describe, expect, it } from "vitest";
import { isDomain, parseCredentialId, parseDatasetId, parseNetworkId, parsePropertyId, parseQuery, sameId } from "./ids.ts";

describe("isDomain (docs/decisions.md#identifiers)", () => {
  it.each([
    ["alice.example", true],
    ["ALICE.Example", true],
    ["a-b.c-d.example", true],
    ["xn--bcher-kva.example", true],
    ["example", false],
    ["alice..example", false],
    [".alice.example", false],
    ["-alice.example", false],
    ["alice-.example", false],
    ["a".repeat(64) + ".example", false],
    ["a".repeat(63) + ".example", true],
    [`${"a.".repeat(125)}example`, false],
    ["127.0.0.1", false],
    ["alice.example:443", false],
    ["https://alice.example", false],
    ["alice.example/path", false],
    ["alice_x.example", false],
    ["alice.e1", false],
  ])("%s → %s", (value, expected) => {
    expect(isDomain(value)).toBe(expected);
  });
});

describe("identifier shapes (docs/protocol.md#identifiers)", () => {
  it.each([
    ["§:entity:alice.example", "alice.example"],
    ["§:ENTITY:Alice.Example", "Alice.Example"],
    ["§:entity:", null],
    ["entity:alice.example", null],
    ["§:entity:alice.example/path", null],
    ["§:property:alice.example", null],
    ["§:entity:x:alice.example", null],
    ["§:entity:10.0.0.1", null],
  ])("parseNetworkId(%s) = %s", (value, expected) => {
    expect(parseNetworkId(value)).toBe(expected);
  });
  it.each([
    ["§:property:blog.example", "blog.example"],
    ["§:entity:blog.example", null],
    ["§:property:blog", null],
  ])("parsePropertyId(%s) = %s", (value, expected) => {
    expect(parsePropertyId(value)).toBe(expected);
  });
  it.each([
    ["@alice@guild.example", { username: "alice", domain: "guild.example", path: null }],
    ["@alice@guild.example/members", { username: "alice", domain: "guild.example", path: "members" }],
    ["@a.b-c_d@guild.example/x/y", { username: "a.b-c_d", domain: "guild.example", path: "x/y" }],
    ["@alice@guild.example/../admin", null],
    ["@..@guild.example/p", null],
    ["@.@guild.example", null],
    ["@...@guild.example", { username: "...", domain: "guild.example", path: null }],
    ["@alice@guild.example/./x", null],
    ["@alice@guild.example/x//y", null],
    ["@alice@guild.example/", null],
    ["@al ice@guild.example", null],
    ["@alice@@guild.example", null],
    ["alice@guild.example", null],
    ["@alice@guild", null],
    ["@alice@127.0.0.1", null],
    ["@alice/x@guild.example", null],
  ])("parseCredentialId(%s)", (value, expected) => {
    expect(parseCredentialId(value)).toEqual(expected);
  });
  it("parses a dataset id", () => {
    expect(parseDatasetId("§:dataset:guild.example/members")).toEqual({ domain: "guild.example", path: "members" });
    expect(parseDatasetId("§:dataset:guild.example")).toBeNull();
  });
  it("V6: compares identifiers case-insensitively", () => {
    expect(sameId("§:entity:Alice.Example", "§:ENTITY:alice.example")).toBe(true);
    expect(sameId("@Alice@Guild.example", "@alice@guild.EXAMPLE")).toBe(true);
    expect(sameId("§:entity:alice.example", "§:entity:alice.example.test")).toBe(false);
  });
});

describe("parseQuery (docs/decisions.md#interfaces)", () => {
  it.each([
    ["alice.example", "domain", "alice.example"],
    ["  Alice.Example \n", "domain", "alice.example"],
    ["https://Alice.example/about?x=1", "url", "alice.example"],
    ["§:entity:Alice.example", "network_id", "alice.example"],
    ["§:property:blog.example", "property_id", "blog.example"],
    ["@alice@guild.example/members", "credential_id", "guild.example"],
  ] as const)("%j is a %s query for %s", (input, kind, domain) => {
    const parsed = parseQuery(input);
    expect(parsed.ok && parsed.query.kind).toBe(kind);
    expect(parsed.ok && parsed.query.domain).toBe(domain);
    expect(parsed.ok && parsed.query.input).toBe(input.trim());
  });
  it("keeps the published casing of an identifier query", () => {
    const parsed = parseQuery("§:property:Blog.Example");
    expect(parsed.ok && parsed.query.kind === "property_id" && parsed.query.id).toBe("§:property:Blog.Example");
    const entity = parseQuery("§:entity:Alice.Example");
    expect(entity.ok && entity.query.input).toBe("§:entity:Alice.Example");
  });
  it.each([
    "",
    "   ",
    "x".repeat(513),
    "http://alice.example",
    "https://alice.example:8443/",
    "https://user:pw@alice.example/",
    "https://127.0.0.1/",
    "https://[::1]/",
    "ftp://alice.example",
    "localhost",
    "10.0.0.1",
    "§:dataset:guild.example/members",
    "§:entity:",
    "@alice",
    "<script>alert(1)</script>",
    "javascript:alert(1)",
  ])("rejects %j with a message naming what is accepted", (input) => {
    const parsed = parseQuery(input);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toMatch(/expected a domain/);
  });
  it("counts the 512-character limit after trimming", () => {
    const domain = `${"a".repeat(60)}.example`;
    expect(parseQuery(`${" ".repeat(600)}${domain}${" ".repeat(600)}`).ok).toBe(true);
    const tooLong = parseQuery(`§:entity:${"a".repeat(510)}.example`);
    expect(!tooLong.ok && tooLong.message).toMatch(/longer than 512/);
  });
});
