import { describe, expect, it } from "vitest";
import { displayOrder, drawnLines, graphemesOf, hasRightToLeft, textWidth, widthOf } from "./preview-text";

describe("display order of a line (UAX #9, by word), for satori to shape each piece", () => {
  it("left-to-right text is one run, untouched", () => {
    expect(displayOrder("Alice Example")).toEqual({ rtl: false, pieces: ["Alice", " ", "Example"] });
  });

  it("a right-to-left line: words reversed, each kept in reading order for HarfBuzz to draw", () => {
    expect(displayOrder("שלום עולם")).toEqual({ rtl: true, pieces: ["עולם", " ", "שלום"] });
    expect(displayOrder("مرحبا بالعالم")).toEqual({ rtl: true, pieces: ["بالعالم", " ", "مرحبا"] });
  });

  it("Latin and numbers inside right-to-left text keep their own order; the paragraph's direction is its first strong letter", () => {
    // Digits after Latin are read with the Latin (W7); after Arabic, on their own.
    expect(displayOrder("مرحبا Alice Example 123").pieces).toEqual(["Alice", " ", "Example", " ", "123", " ", "مرحبا"]);
    expect(displayOrder("مرحبا 123 Alice").pieces).toEqual(["Alice", " ", "123", " ", "مرحبا"]);
    expect(displayOrder("Acme שלום עולם Labs")).toEqual({
      rtl: false,
      pieces: ["Acme", " ", "עולם", " ", "שלום", " ", "Labs"],
    });
  });

  it("brackets and emoji stay with their words; an emoji sequence is never split", () => {
    expect(displayOrder("שלום (בדיקה) 👨‍👩‍👧").pieces).toEqual(["👨‍👩‍👧", " ", "(בדיקה)", " ", "שלום"]);
  });
});

describe("lines broken before they are reordered", () => {
  it("the first words read go on the first line, each line in display order, right to left", () => {
    const lines = drawnLines("אחד שתיים שלוש ארבע", 10, 3);
    expect(lines.map((l) => l.pieces.join(""))).toEqual(["שתיים אחד", "ארבע שלוש"]);
    expect(lines.every((l) => l.rtl)).toBe(true);
  });

  it("a word longer than a line is cut where the line is full", () => {
    expect(drawnLines("א".repeat(25), 10, 3).map((l) => l.pieces.join(""))).toEqual(["א".repeat(10), "א".repeat(10), "א".repeat(5)]);
  });

  it("past the last line the text is cut, the cut marked with an ellipsis inside the line", () => {
    const lines = drawnLines("אחד שתיים שלוש ארבע חמש שש", 10, 2);
    expect(lines).toHaveLength(2);
    const last = lines[1]?.pieces.join("") ?? "";
    expect(last).toContain("…");
    expect(textWidth(last)).toBeLessThanOrEqual(10);
  });

  it("wide characters count twice", () => {
    expect(widthOf("株")).toBe(2);
    expect(widthOf("한")).toBe(2);
    expect(widthOf("🚀")).toBe(2);
    expect(widthOf("a")).toBe(1);
    expect(widthOf("ש")).toBe(1);
    expect(textWidth("Aב株")).toBe(4);
    expect(graphemesOf("e\u0301👨‍👩‍👧")).toHaveLength(2);
  });

  it("right-to-left letters are told apart from the rest", () => {
    expect(hasRightToLeft("Alice 株式会社 🚀")).toBe(false);
    expect(hasRightToLeft("Alice ש")).toBe(true);
    expect(hasRightToLeft("ع")).toBe(true);
  });
});
