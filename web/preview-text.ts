/**
 * The text of preview images (docs/decisions.md#preview-images), framework-free: what of a stranger's text
 * the image can draw, and in which order. The drawing (web/preview-image-render.tsx, satori) shapes
 * each piece of text with HarfBuzz, Arabic joined and marks placed, but lays every line out left to
 * right in the order it is given: right-to-left text is put in display order here (the Unicode
 * bidirectional algorithm, UAX #9, by bidi-js), a line at a time.
 */
import bidiFactory from "bidi-js";
import { withoutBidiControls } from "../lib/present/display";

/**
 * The code points a TrueType/OpenType font maps to a glyph, from its `cmap` (formats 4 and 12, the
 * Unicode ones). Throws on a file that is not a font.
 */
export function fontCoverage(font: Uint8Array): Set<number> {
  const v = new DataView(font.buffer, font.byteOffset, font.byteLength);
  const tables = v.getUint16(4);
  let cmap = -1;
  for (let i = 0; i < tables; i++) {
    const at = 12 + 16 * i;
    if (String.fromCharCode(font[at] ?? 0, font[at + 1] ?? 0, font[at + 2] ?? 0, font[at + 3] ?? 0) === "cmap") cmap = v.getUint32(at + 8);
  }
  if (cmap < 0) throw new Error("the font has no cmap table");
  const covered = new Set<number>();
  const subtables = v.getUint16(cmap + 2);
  for (let i = 0; i < subtables; i++) {
    const at = cmap + 4 + 8 * i;
    const platform = v.getUint16(at);
    const encoding = v.getUint16(at + 2);
    // Unicode (0, any) or Windows Unicode BMP (3, 1) and full repertoire (3, 10).
    if (!(platform === 0 || (platform === 3 && (encoding === 1 || encoding === 10)))) continue;
    const table = cmap + v.getUint32(at + 4);
    const format = v.getUint16(table);
    if (format === 4) {
      const segX2 = v.getUint16(table + 6);
      const ends = table + 14;
      const starts = ends + segX2 + 2;
      const deltas = starts + segX2;
      const offsets = deltas + segX2;
      for (let s = 0; s < segX2 / 2; s++) {
        const end = v.getUint16(ends + 2 * s);
        const start = v.getUint16(starts + 2 * s);
        const delta = v.getInt16(deltas + 2 * s);
        const offset = v.getUint16(offsets + 2 * s);
        for (let c = start; c <= end && c !== 0xffff; c++) {
          let glyph = (c + delta) & 0xffff;
          if (offset !== 0) {
            const raw = v.getUint16(offsets + 2 * s + offset + 2 * (c - start));
            glyph = raw === 0 ? 0 : (raw + delta) & 0xffff;
          }
          if (glyph !== 0) covered.add(c);
        }
      }
    } else if (format === 12) {
      const groups = v.getUint32(table + 12);
      for (let g = 0; g < groups; g++) {
        const at12 = table + 16 + 12 * g;
        const first = v.getUint32(at12);
        const last = Math.min(v.getUint32(at12 + 4), 0x10ffff);
        const glyph = v.getUint32(at12 + 8);
        for (let c = first; c <= last; c++) if (glyph + (c - first) !== 0) covered.add(c);
      }
    }
  }
  return covered;
}

const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" });
/** One emoji as Unicode lists them (a ZWJ sequence, a flag, a keycap, a skin tone): drawn as a picture. */
export const EMOJI = new RegExp("^\\p{RGI_Emoji}$", "v"); // the `v` flag: RGI_Emoji is a property of strings

const MARK = /^\p{M}$/u;
/** Marks kept on one letter: enough for Vietnamese or a pointed Hebrew letter; a pile of dozens ("Zalgo") is cut. */
const MARKS_PER_LETTER = 2;

/** The graphemes of `text`, as a person counts characters. */
export const graphemesOf = (text: string): string[] => Array.from(graphemes.segment(text), (s) => s.segment);

/** What the image can draw: the code points its fonts have, and the emoji it has a picture of. */
export type Glyphs = { covered: ReadonlySet<number>; picture: (emoji: string) => boolean };

/** Ideographs, kana, Hangul and emoji take about twice a Latin letter's width. */
const WIDE = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Extended_Pictographic}\p{Regional_Indicator}]/u;

/** How wide a grapheme is drawn, in Latin letters (about 0.55 em): 2 for a wide one, else 1. */
export const widthOf = (grapheme: string): number => (WIDE.test(grapheme) ? 2 : 1);

/** How wide `text` is drawn, in Latin letters. */
export const textWidth = (text: string): number => graphemesOf(text).reduce((sum, g) => sum + widthOf(g), 0);

/**
 * Text the image can draw: bidi controls removed (its order is worked out from the letters, never
 * from a stranger's overrides), composed (NFC), every white space one space. An emoji is kept when
 * `picture` has an image of it; any other grapheme only when the fonts have every code point of it,
 * with at most two marks on a letter and none alone. So satori is never asked for a font or a
 * picture it does not have, and next to nothing is drawn as an empty box.
 */
export function drawable(text: string, { covered, picture }: Glyphs): string {
  const plain = withoutBidiControls(text).normalize("NFC").replace(/\s+/gu, " ");
  let out = "";
  for (const segment of graphemesOf(plain)) {
    if (EMOJI.test(segment)) {
      if (picture(segment)) out += segment;
      continue;
    }
    const points = Array.from(segment);
    const first = points[0] ?? "";
    if (MARK.test(first) || !covered.has(first.codePointAt(0) ?? -1)) continue;
    let marks = 0;
    for (const p of points) {
      if (!covered.has(p.codePointAt(0) ?? -1)) continue;
      if (MARK.test(p) && ++marks > MARKS_PER_LETTER) continue;
      out += p;
    }
  }
  return out.replace(/ {2,}/g, " ").trim();
}

/** Text cut to `max` graphemes, the cut marked with an ellipsis. */
export function clipGraphemes(text: string, max: number): string {
  const parts = Array.from(graphemes.segment(text), (s) => s.segment);
  return parts.length <= max
    ? text
    : `${parts
        .slice(0, max - 1)
        .join("")
        .trimEnd()}…`;
}

/** A line as the image draws it: pieces left to right, each shaped on its own; right-aligned when `rtl`. */
export type DrawnLine = { rtl: boolean; pieces: string[] };

const bidi = bidiFactory();

/**
 * One UTF-16 unit standing for a grapheme, of its bidirectional class: bidi-js reads units, and a
 * character beyond U+FFFF (an emoji, a rare ideograph) would read as two. What is left after
 * `drawable` beyond U+FFFF is an emoji (a neutral, as U+FFFC is) or a left-to-right letter.
 */
const standIn = (g: string) => ((g.codePointAt(0) ?? 0) <= 0xffff ? (g[0] ?? "") : EMOJI.test(g) ? "\ufffc" : "a");

/**
 * A line of text in display order (UAX #9, rules L1 and L2), as pieces: each word, or run of one
 * direction within a word, stays in reading order, for satori to shape (HarfBuzz draws a right-to-left
 * word right to left); the pieces are reversed around it as the algorithm reverses characters.
 */
export function displayOrder(line: string): DrawnLine {
  const parts = graphemesOf(line);
  const { levels, paragraphs } = bidi.getEmbeddingLevels(parts.map(standIn).join(""));
  const base = paragraphs[0]?.level ?? 0;
  const units: { text: string; level: number; space: boolean }[] = [];
  parts.forEach((g, i) => {
    const level = levels[i] ?? base;
    const space = g === " ";
    const last = units[units.length - 1];
    if (last && !space && !last.space && last.level === level) last.text += g;
    else units.push({ text: g, level, space });
  });
  // L1: white space at the end of the line takes the paragraph's level.
  for (let i = units.length - 1; i >= 0 && units[i]?.space; i--) (units[i] as { level: number }).level = base;
  // L2: from the highest level down to the lowest odd one, every run at that level or higher is reversed.
  const all = units.map((u) => u.level);
  const lowestOdd = Math.min(...all.filter((l) => l % 2 === 1));
  for (let level = Math.max(0, ...all); level >= lowestOdd && level > 0; level--) {
    for (let i = 0; i < units.length;) {
      if ((units[i]?.level ?? 0) < level) {
        i++;
        continue;
      }
      let j = i;
      while (j < units.length && (units[j]?.level ?? 0) >= level) j++;
      units.splice(i, j - i, ...units.slice(i, j).reverse());
      i = j;
    }
  }
  return { rtl: base % 2 === 1, pieces: units.map((u) => u.text) };
}

/** Whether `text` has a right-to-left letter of a script the image draws (Hebrew, Arabic): then the image breaks its lines itself. */
export const hasRightToLeft = (text: string): boolean => /[\p{Script=Hebrew}\p{Script=Arabic}]/u.test(text);

/**
 * Text on at most `maxLines` lines at most `perLine` Latin letters wide ({@link widthOf}), broken at spaces in reading order
 * (a word longer than a line is cut into pieces), the last cut with an ellipsis; then each line in
 * display order. Lines are broken before they are reordered, as UAX #9 says: satori would break the
 * already reordered text, and a right-to-left name on two lines would start on the second.
 */
export function drawnLines(text: string, perLine: number, maxLines: number): DrawnLine[] {
  const lines: string[] = [];
  let line: string[] = [];
  let width = 0;
  const push = () => {
    lines.push(line.join("").trim());
    line = [];
    width = 0;
  };
  const add = (g: string) => {
    line.push(g);
    width += widthOf(g);
  };
  for (const word of text.split(" ")) {
    const parts = graphemesOf(word);
    const wordWidth = parts.reduce((sum, g) => sum + widthOf(g), 0);
    if (width > 0 && width + 1 + wordWidth > perLine) push();
    if (width > 0) add(" ");
    for (const g of parts) {
      // A word longer than a line: cut where the line is full.
      if (width > 0 && width + widthOf(g) > perLine) push();
      add(g);
    }
  }
  if (line.length > 0) push();
  if (lines.length > maxLines) {
    const last = graphemesOf(lines[maxLines - 1] ?? "");
    while (last.length > 0 && textWidth(last.join("")) + 1 > perLine) last.pop();
    lines.splice(maxLines - 1, lines.length, `${last.join("").trimEnd()}…`);
  }
  return lines.map(displayOrder);
}
