import { describe, expect, it } from "vitest";
import { jsonb } from "./verdicts";

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
