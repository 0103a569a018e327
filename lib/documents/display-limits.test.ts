import { describe, expect, it } from "vitest";
import {
  cleanText,
  clip,
  cut,
  cutBytes,
  keptJson,
  keptMessage,
  MAX_DESCRIPTION_LENGTH,
  MAX_ID_BYTES,
  MAX_MESSAGE_LENGTH,
  utf8Bytes,
} from "./display-limits.ts";

describe("cleanText: the one cleaning of publisher text (docs/decisions.md#rendering)", () => {
  it.each([
    ["U+0001", "a\u0001b", "a\ufffdb"],
    ["U+0007 (bell)", "a\u0007b", "a\ufffdb"],
    ["U+0008 (backspace)", "a\u0008b", "a\ufffdb"],
    ["U+000B (vertical tab)", "a\u000bb", "a\ufffdb"],
    ["U+000C (form feed)", "a\u000cb", "a\ufffdb"],
    ["U+001B (escape)", "a\u001b[31mb", "a\ufffd[31mb"],
    ["U+0000", "a\u0000b", "a\ufffdb"],
    ["U+007F (DEL)", "a\u007fb", "a\ufffdb"],
    ["U+0085 (next line, C1)", "a\u0085b", "a\ufffdb"],
    ["U+009F (C1)", "a\u009fb", "a\ufffdb"],
    ["tab, line feed, return: a space", "a\tb\nc\rd", "a b c d"],
    ["a lone high surrogate", "a\ud800b", "a\ufffdb"],
    ["a lone low surrogate", "a\udfffb", "a\ufffdb"],
    ["a pair is kept", "a\ud83d\ude00b", "a\ud83d\ude00b"],
    ["U+FFFE, U+FFFF", "a\ufffeb\uffffc", "a\ufffdb\ufffdc"],
    ["U+FDD0 to U+FDEF", "a\ufdd0b\ufdefc", "a\ufffdb\ufffdc"],
    ["U+1FFFE, U+10FFFF", "a\u{1fffe}b\u{10ffff}c", "a\ufffdb\ufffdc"],
    ["bidi controls stay in isolated text", "a\u202eb\u2066c\u2069", "a\u202eb\u2066c\u2069"],
    ["letters, marks, emoji and U+00A0 stay", "Zoë ש\u05b8 \u{1f426}\u200d\u{1f525}\u00a0§", "Zoë ש\u05b8 \u{1f426}\u200d\u{1f525}\u00a0§"],
  ])("%s", (_, text, expected) => expect(cleanText(text)).toBe(expected));

  it.each([
    ["embeddings, overrides, isolates and marks go", "a\u202eb\u202c\u2066c\u2069\u200ed\u200f\u061c", "abcd"],
    ["with the rest cleaned", "\u202eevil\u0007\u0085", "evil\ufffd\ufffd"],
  ])("inline: %s", (_, text, expected) => expect(cleanText(text, "inline")).toBe(expected));
});

describe("cut: at a code point, marked, well-formed", () => {
  it.each([
    ["short text is itself", "abc", 5, "abc"],
    ["exactly the length", "abcde", 5, "abcde"],
    ["one over", "abcdef", 5, "abcd…"],
    ["never inside a pair", "\u{1f600}\u{1f600}\u{1f600}", 2, "\u{1f600}…"],
    ["pairs count once", "\u{1f600}\u{1f600}", 2, "\u{1f600}\u{1f600}"],
    ["a lone surrogate made well-formed", "ab\ud800", 10, "ab\ufffd"],
    ["not cleaned", "a\u0007b", 5, "a\u0007b"],
  ])("%s", (_, text, max, expected) => expect(cut(text, max)).toBe(expected));

  it("walks no further than the length: a megabyte is cut at once", () => {
    expect(cut("x".repeat(1_000_000), 300)).toHaveLength(300);
  });

  it("clip cleans what it keeps", () => expect(clip("a\u0007b\u0085c", 4)).toBe("a\ufffdb…"));
});

describe("cutBytes: at most so many bytes of UTF-8, the mark included", () => {
  it.each([
    ["ASCII within", "a".repeat(1024), "a".repeat(1024)],
    ["ASCII over", "a".repeat(1025), `${"a".repeat(1021)}…`],
    ["two-byte letters", "é".repeat(600), `${"é".repeat(510)}…`],
    ["four-byte pairs, never split", "\u{1f600}".repeat(300), `${"\u{1f600}".repeat(255)}…`],
  ])("%s", (_, text, expected) => {
    expect(cutBytes(text, MAX_ID_BYTES)).toBe(expected);
    expect(utf8Bytes(cutBytes(text, MAX_ID_BYTES))).toBeLessThanOrEqual(MAX_ID_BYTES);
  });

  it.each([
    ["ASCII", "abc", 3],
    ["é", "é", 2],
    ["€", "€", 3],
    ["a pair", "\u{1f600}", 4],
    ["a lone surrogate, as U+FFFD", "\ud800", 3],
  ])("utf8Bytes of %s", (_, text, n) => expect(utf8Bytes(text)).toBe(n));
});

describe("keptJson: a publisher's JSON as an answer carries it (docs/decisions.md#the-result-record)", () => {
  const long = "u".repeat(MAX_DESCRIPTION_LENGTH + 1);

  it("is the value itself when no string is longer", () => {
    const value = { id: "https://a.example/", nested: [{ name: "n" }] };
    expect(keptJson(value)).toBe(value);
  });

  it("cuts every string, keys too, and keeps the shape, a __proto__ key as an own key", () => {
    const value = JSON.parse(`{"id": "${long}", "list": ["${long}", 3, null, true], "${long}": {"__proto__": "${long}"}}`) as object;
    const kept = keptJson(value) as Record<string, unknown>;
    const cutText = `${"u".repeat(MAX_DESCRIPTION_LENGTH - 1)}…`;
    expect(kept).toEqual({ id: cutText, list: [cutText, 3, null, true], [cutText]: JSON.parse(`{"__proto__": "${cutText}"}`) });
    expect(Object.getPrototypeOf(kept[cutText])).toBe(Object.prototype);
    // The source is unchanged: verification reads it whole.
    expect((value as { id: string }).id).toBe(long);
  });

  it("is one copy per value, so parses remembered per value still find it", () => {
    const value = { id: long };
    expect(keptJson(value)).toBe(keptJson(value));
  });

  it("a string alone is cut", () => expect(keptJson(long)).toHaveLength(MAX_DESCRIPTION_LENGTH));
});

it("a message is kept to its length", () => {
  expect(keptMessage("m".repeat(10_000))).toHaveLength(MAX_MESSAGE_LENGTH);
  expect(keptMessage("short")).toBe("short");
});
