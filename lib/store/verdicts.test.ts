import { describe, expect, it } from "vitest";
import type { Claim } from "../result/record.ts";
import { claimKey, jsonb, keptDetails, keptProblems } from "./verdicts.ts";

describe("jsonb (docs/decisions.md#rendering: a lone surrogate is kept as U+FFFD)", () => {
  it.each([
    ["a lone high surrogate", { name: "a\ud800b" }, { name: "a\ufffdb" }],
    ["a lone low surrogate", ["\udfff"], ["\ufffd"]],
    ["one in a key", { "k\udbff": 1 }, { "k\ufffd": 1 }],
    ["a pair, kept", { name: "\ud83d\ude00" }, { name: "\ud83d\ude00" }],
    ["a backslash before the letters ud800, kept", { name: "\\ud800" }, { name: "\\ud800" }],
    ["a backslash before a lone surrogate", { name: "\\\ud800" }, { name: "\\\ufffd" }],
    ["two backslashes before the letters", { name: "\\\\ud800" }, { name: "\\\\ud800" }],
  ])("%s", (_what, value, expected) => {
    const text = jsonb(value);
    expect(text).not.toMatch(/(?<!\\)(?:\\\\)*\\ud[89a-f]/i);
    expect(JSON.parse(text)).toEqual(expected);
  });
});

describe("claim keys fit the index whatever the id (docs/decisions.md#the-index)", () => {
  const claim = (id: string | null): Claim => ({ id, verified: false, claimed: {}, problems: [] });
  const digest = /^#sha256:[0-9a-f]{64}$/;
  it.each([
    ["an id, in lower case", "§:property:Blog.Example", "§:property:blog.example"],
    ["no id: its place", null, "#3"],
    ["1,024 bytes of ASCII", `https://a.example/${"x".repeat(1006)}`, `https://a.example/${"x".repeat(1006)}`],
    ["a lone surrogate, as the index writes it", "https://a.example/\ud800", "https://a.example/\ufffd"],
  ])("%s", (_, id, key) => expect(claimKey(claim(id), 3)).toBe(key));

  it.each([
    ["1,025 bytes", `https://a.example/${"x".repeat(1007)}`],
    ["9 KB", `https://a.example/${"x".repeat(9000)}`],
    ["lower case longer than the id (İ is 2 bytes, i̇ 3)", `https://a.example/${"İ".repeat(400)}`],
    ["1,000 backslashes, 2,000 bytes as a cursor writes them", `https://a.example/${"\\".repeat(1000)}`],
    ["200 control characters, 1,200 bytes as JSON", `https://a.example/${"\u0001".repeat(200)}`],
  ])("%s: its digest, the same each time, distinct from another's", (_, id) => {
    const key = claimKey(claim(id), 0);
    expect(key).toMatch(digest);
    expect(claimKey(claim(id), 0)).toBe(key);
    expect(claimKey(claim(`${id}y`), 0)).not.toBe(key);
  });

  it("never more than 1,024 bytes written as JSON", () => {
    for (const id of ["a", "é".repeat(700), "\u{1f600}".repeat(300), '"'.repeat(600), "x".repeat(100_000)])
      expect(Buffer.byteLength(JSON.stringify(claimKey(claim(id), 0)))).toBeLessThanOrEqual(1026);
  });
});

describe("what the index keeps of an entity (docs/decisions.md#the-index)", () => {
  it.each([
    ["short details are kept as they are", { name: "A", email: "a@b" }, { name: "A", email: "a@b" }],
    [
      "a description at 5,000, every other field at 300",
      { email: "e".repeat(400), description: "d".repeat(6000) },
      { email: `${"e".repeat(299)}…`, description: `${"d".repeat(4999)}…` },
    ],
  ])("%s", (_, details, kept) => expect(keptDetails(details)).toEqual(kept));

  it("a problem's message and detail at 2,000", () => {
    const [p] = keptProblems([{ code: "c", severity: "error", message: "m".repeat(3000), detail: "d".repeat(3000) }]);
    expect([p?.message.length, p?.detail?.length]).toEqual([2000, 2000]);
  });
});
