import { describe, expect, it } from "vitest";
import { cleanText, clip, withoutBidiControls } from "./display.ts";

describe("untrusted text for display", () => {
  it.each([
    ["a\ud800b", "a\ufffdb"],
    ["\udfffx", "\ufffdx"],
    ["\ud83d", "\ufffd"],
    ["\ud83d\ude00", "\ud83d\ude00"],
    ["plain", "plain"],
  ])("cleanText(%j) = %j: well-formed", (text, expected) => {
    expect(cleanText(text)).toBe(expected);
  });
  it("clip is well-formed too, and never cuts a pair in two", () => {
    expect(clip("ab\ud800", 10)).toBe("ab\ufffd");
    expect(clip("\ud83d\ude00\ud83d\ude00\ud83d\ude00", 2)).toBe("\ud83d\ude00…");
  });
  it("removes bidi embeddings, overrides, isolates and marks for the title", () => {
    expect(withoutBidiControls("a\u202eb\u202c\u2066c\u2069\u200ed\u200f\u061c")).toBe("abcd");
    expect(cleanText("a\u202eb\u202c\u2066c\u2069\u200ed\u200f\u061c", "inline")).toBe("abcd");
  });
});
