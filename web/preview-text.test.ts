import { describe, expect, it } from "vitest";
import { drawable, graphemesOf, readsRightToLeft, textWidth, widthOf, type Glyphs } from "./preview-text";

/** Fonts that have ASCII, Hebrew and the joiners (as Geist and Noto do), and a picture of the rocket alone. */
const glyphs: Glyphs = {
  covered: new Set([
    ...Array.from({ length: 95 }, (_, i) => 0x20 + i),
    ...Array.from({ length: 0x70 }, (_, i) => 0x590 + i),
    0x200c,
    0x200d,
    0x301,
    0x302,
  ]),
  picture: (emoji) => emoji === "🚀" || emoji === "\u2764\uFE0F",
};

describe("which way a name reads: the direction of its first letter (UAX #9, P2–P3)", () => {
  it("right to left when the first letter is Hebrew or Arabic, whatever digits or punctuation come first", () => {
    expect(readsRightToLeft("שלום Acme")).toBe(true);
    expect(readsRightToLeft("123 (مرحبا) Acme")).toBe(true);
    expect(readsRightToLeft("Acme שלום")).toBe(false);
    expect(readsRightToLeft("株式会社 שלום")).toBe(false);
    expect(readsRightToLeft("123 🚀")).toBe(false);
    expect(readsRightToLeft("")).toBe(false);
  });
});

describe("drawable text, checked as it is drawn", () => {
  it("a character dropped between two others cannot join them into a grapheme nobody checked", () => {
    // A control between an emoji and a joiner: without it, 🚀 + ZWJ + 🚀 is one sequence with no picture.
    expect(drawable("Rocket 🚀\u200d🚀 x", glyphs)).toBe("Rocket x");
    expect(drawable("Rocket 🚀\u0001\u200d🚀 x", glyphs)).toBe("Rocket x");
    // Marks behind a control and a joiner would pile onto the letter once the control goes.
    const piled = drawable(`Zalgo${"\u0001\u200d\u0301\u0302".repeat(70)}`, glyphs);
    expect(piled.startsWith("Zalgo")).toBe(true);
    expect(Array.from(piled).length).toBeLessThanOrEqual(5 + 3);
  });

  it("a symbol no font has is drawn as its emoji when there is a picture of it (❤ bare or asked as text), else dropped", () => {
    expect(drawable("I \u2764 NY", glyphs)).toBe("I \u2764\uFE0F NY");
    expect(drawable("I \u2764\uFE0E NY", glyphs)).toBe("I \u2764\uFE0F NY");
    expect(drawable("I \u2764\uFE0F NY", glyphs)).toBe("I \u2764\uFE0F NY");
    // ☺ has an emoji form, but no picture here; ⌘ has none.
    expect(drawable("\u263A \u2318 ok", glyphs)).toBe("ok");
    // A letter the fonts have stays a letter, whatever selector follows it.
    expect(drawable("A\uFE0E", glyphs)).toBe("A");
  });

  it("text that shows nothing (joiners, fillers, a soft hyphen) is no text", () => {
    expect(drawable("\u200b\u2060\ufeff\u00ad", glyphs)).toBe("");
    expect(drawable("\u3164\u3164", { covered: new Set([0x3164]), picture: () => false })).toBe("");
  });

  it("only the first thousand units of a text are looked at", () => {
    expect(drawable("a".repeat(1_000_000), glyphs)).toHaveLength(1000);
  });
});

describe("widths", () => {
  it("wide characters count twice", () => {
    expect(widthOf("株")).toBe(2);
    expect(widthOf("한")).toBe(2);
    expect(widthOf("🚀")).toBe(2);
    expect(widthOf("a")).toBe(1);
    expect(widthOf("ש")).toBe(1);
    expect(textWidth("Aב株")).toBe(4);
    expect(graphemesOf("e\u0301👨‍👩‍👧")).toHaveLength(2);
  });
});
