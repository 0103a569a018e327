import { describe, expect, it } from "vitest";
import { markWords } from "./marks.ts";

describe("the searched words marked in a hit (docs/decisions.md#search)", () => {
  it("marks words that start with a searched word, ignoring case and accents, and keeps every character", () => {
    const segments = markWords("The Makers’ Guild of Zürich", "mak zur");
    expect(segments).toEqual([
      { text: "The ", marked: false },
      { text: "Makers", marked: true },
      { text: "’ Guild of ", marked: false },
      { text: "Zürich", marked: true },
    ]);
    expect(segments.map((s) => s.text).join("")).toBe("The Makers’ Guild of Zürich");
  });

  it("marks nothing when nothing matches, or the search has no words", () => {
    expect(markWords("Alice", "bob")).toEqual([{ text: "Alice", marked: false }]);
    expect(markWords("Alice", "😀 %")).toEqual([{ text: "Alice", marked: false }]);
  });

  it("keeps decomposed accents with their letter", () => {
    expect(markWords("Cafe\u0301 noir", "cafe")).toEqual([
      { text: "Cafe\u0301", marked: true },
      { text: " noir", marked: false },
    ]);
  });
});
