/**
 * The text of preview images (docs/decisions.md#preview-images), framework-free: what of a stranger's
 * text the image can draw, how wide it is, and which way it reads. The drawing
 * (web/preview-image-render.tsx, satori) shapes the text with HarfBuzz (Arabic joined, marks placed)
 * and orders it by the Unicode bidirectional algorithm, a line at a time, once told the paragraph's
 * direction.
 */
import { withoutBidiControls } from "ident-resolver/present";

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
const EXTENDING = /^[\p{M}\p{Cf}]$/u;
const SPACE_FIRST = /^\s/u;
/**
 * Marks (and joiners) kept on one letter: enough for Vietnamese, a pointed Hebrew letter (שּׁ), or an
 * Indic letter with its nukta, vowel sign and nasal (ज़िं); a pile of dozens ("Zalgo") is cut.
 */
const MARKS_PER_LETTER = 3;
/**
 * Letters kept in one grapheme: the longest conjuncts written have five consonants; since Unicode
 * 15.1 a chain of any length joined by viramas is one grapheme, which would be sized as one letter.
 */
const LETTERS_PER_GRAPHEME = 5;
/** Myanmar's vowel signs that Unicode segments apart from their letter (ာ, ါ, း, and ာ with ်). */
const MYANMAR_MARK = /^\p{Script=Myanmar}/u;
const ENDS_MYANMAR = /\p{Script=Myanmar}$/u;
/** Of those, kept after one letter: အော်, ကျော်, ဝင်း need two. */
const APART_PER_LETTER = 2;
/**
 * Invisible characters satori passes over when it finds emoji, so that the emoji on either side
 * would make a sequence nobody checked (🚀, a word joiner, 🏽): dropped. The joiners and variation
 * selectors that build emoji and shape scripts stay, and so do the tags of subdivision flags.
 */
const IGNORABLE = /^\p{Default_Ignorable_Code_Point}$/u;
const stays = (c: number) => c === 0x200c || c === 0x200d || (c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xe0020 && c <= 0xe007f);
const withoutSkipped = (text: string): string =>
  Array.from(text)
    .filter((c) => !IGNORABLE.test(c) || stays(c.codePointAt(0) ?? 0))
    .join("");

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

/** The most of a text looked at, in UTF-16 units: names come cut to 300 characters (lib/present), and segmenting is slow past thousands. */
const MAX_INPUT = 1000;
/** Text that shows nothing: white space and characters drawn as nothing (joiners, fillers, soft hyphens). */
const INVISIBLE = /^[\p{White_Space}\p{Default_Ignorable_Code_Point}]*$/u;

/**
 * Text the image can draw: bidi controls removed (its order is worked out from the letters, never
 * from a stranger's overrides), composed (NFC), every white space one space. An emoji is kept when
 * `picture` has an image of it, and so is a symbol no font has whose emoji form has one (drawn as
 * that); any other grapheme only when the fonts have every code point of it,
 * with at most three marks on a letter and none alone. Text that would show nothing is empty. So satori
 * is never asked for a picture it does not have, nor for a code point no font has (it picks one font
 * for a grapheme, so a grapheme mixing two fonts' characters can still draw a box).
 */
export function drawable(text: string, glyphs: Glyphs): string {
  let out = withoutSkipped(withoutBidiControls(text.slice(0, MAX_INPUT)))
    .normalize("NFC")
    .replace(/\s+/gu, " ");
  // Dropping a character can join its neighbours into a new grapheme (a control between an emoji and a
  // joiner): checked again until nothing changes, so every grapheme of what is drawn passed. Each pass
  // only removes; one that still changes after a few passes gives nothing.
  for (let pass = 0; ; pass++) {
    // Composed again: what a dropped character kept apart may compose now (a, 🏽, U+0301 gives á).
    const next = onlyDrawable(out, glyphs).normalize("NFC");
    if (next === out) break;
    if (pass === 4) return "";
    out = next;
  }
  return INVISIBLE.test(out) ? "" : out;
}

/** One pass of {@link drawable}: the graphemes of `text` it keeps. */
function onlyDrawable(text: string, { covered, picture }: Glyphs): string {
  let out = "";
  /** Graphemes of marks kept after the last letter (Myanmar's, segmented apart). */
  let apart = 0;
  for (const segment of graphemesOf(text)) {
    // A space with a mark on it (" ः") is a space: the mark would be drawn on nothing.
    if (SPACE_FIRST.test(segment)) {
      out += " ";
      continue;
    }
    if (EMOJI.test(segment)) {
      if (picture(segment)) out += segment;
      continue;
    }
    const points = Array.from(segment);
    const first = points[0] ?? "";
    if (!covered.has(first.codePointAt(0) ?? -1)) {
      // A symbol no font has that is also an emoji (❤, ☺, ✈, asked as text with U+FE0E or not): its picture.
      const asEmoji = `${segment.replace(/[\uFE0E\uFE0F]/gu, "")}\uFE0F`;
      if (EMOJI.test(asEmoji) && picture(asEmoji)) out += asEmoji;
      continue;
    }
    if (MARK.test(first)) {
      // Myanmar's vowel signs that Unicode segments apart from their letter stay with the letter
      // before them (two such at most); any other mark alone is dropped.
      if (MYANMAR_MARK.test(first) && ENDS_MYANMAR.test(out) && ++apart <= APART_PER_LETTER)
        out += points
          .filter((p) => covered.has(p.codePointAt(0) ?? -1))
          .slice(0, MARKS_PER_LETTER)
          .join("");
      continue;
    }
    apart = 0;
    let marks = 0;
    let letters = 0;
    for (const p of points) {
      if (!covered.has(p.codePointAt(0) ?? -1)) continue;
      // Marks and joiners (a Persian zero-width non-joiner) count alike, on each letter of a grapheme
      // (an Indic conjunct joins several, each with its virama or vowel sign).
      if (EXTENDING.test(p)) {
        if (++marks > MARKS_PER_LETTER) continue;
      } else if (++letters > LETTERS_PER_GRAPHEME) break;
      else marks = 0;
      out += p;
    }
  }
  return out.replace(/ {2,}/g, " ").trim();
}

/** Text cut to `max` graphemes, the cut marked with an ellipsis. */
export function clipGraphemes(text: string, max: number): string {
  const parts = graphemesOf(text);
  return parts.length <= max
    ? text
    : `${parts
        .slice(0, max - 1)
        .join("")
        .trimEnd()}…`;
}

/** Hebrew and Arabic letters: the strong right-to-left ones of the scripts the image draws. */
const RIGHT_TO_LEFT = /[\p{Script=Hebrew}\p{Script=Arabic}]/u;

/**
 * Whether `text` reads right to left: its first letter is Hebrew or Arabic (UAX #9, rules P2–P3:
 * the paragraph takes the direction of its first strong character; digits and punctuation are not strong).
 */
export function readsRightToLeft(text: string): boolean {
  const first = /\p{L}/u.exec(text)?.[0];
  return first !== undefined && RIGHT_TO_LEFT.test(first);
}
