/**
 * The lengths a publisher's text is kept at, and its one cleaning (docs/decisions.md#validation,
 * docs/decisions.md#rendering): what the documents' reader, the result record, the index, the JSON-LD
 * and every surface apply alike. Presentation beyond them is in lib/present/display.ts.
 */

/** Names, titles, types, and every other short field a publisher writes (`entity_type`, `email`, …), in characters. */
export const MAX_NAME_LENGTH = 300;
/** Descriptions, in characters; also any other string of a publisher's JSON an answer carries (`claimed`, `document`). */
export const MAX_DESCRIPTION_LENGTH = 5000;
/** What a claim's card shows of its description, in characters (docs/decisions.md#rendering). */
export const MAX_CLAIM_DESCRIPTION_LENGTH = 500;
/** What a claim's card shows of its type, a label beside its title, in characters (docs/decisions.md#rendering). */
export const MAX_CLAIM_TYPE_LENGTH = 60;
/** What a claim's card shows of the technical detail of why it is not verified, in characters (docs/decisions.md#rendering). */
export const MAX_CLAIM_TECHNICAL_LENGTH = 300;
/**
 * An id or a URL, in bytes of UTF-8: read whole up to this, or not read. A claim's id keys it in the
 * index, whose btree rows are at most 2,704 bytes, its domain and kind included (docs/decisions.md#the-index).
 */
export const MAX_ID_BYTES = 1024;
/** A problem's message or technical detail, in characters: it may quote a URL or two. */
export const MAX_MESSAGE_LENGTH = 2000;
/** What marks text cut short. */
export const CUT_MARK = "…";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Untrusted text made well-formed: a lone surrogate becomes U+FFFD. Left alone, it is written into
 * the HTML and the page's data differently, and React then discards the server's HTML.
 */
export const wellFormed = (text: string): string => text.replace(LONE_SURROGATE, "\uFFFD");

/** Tab, line feed and carriage return: white space, shown as a space. */
const LINE_CONTROLS = /[\t\n\r]/g;
/** The noncharacters at the end of each plane past the first: U+1FFFE, U+1FFFF, …, U+10FFFF. */
const PLANE_ENDS = Array.from({ length: 16 }, (_, i) => `\\u{${(i + 1).toString(16)}fffe}\\u{${(i + 1).toString(16)}ffff}`).join("");
/**
 * What no page, feed or terminal shows as it is (HTML calls each a parse error; XML 1.0 cannot hold
 * most): the other C0 controls, DEL, the C1 controls (U+0085 among them), lone surrogates (a code
 * point of their own in a `u` expression) and the noncharacters.
 */
const NOT_SHOWN = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f\\ud800-\\udfff\\ufdd0-\\ufdef\\ufffe\\uffff${PLANE_ENDS}]`, "gu");
/** The same, but for tab, line feed and carriage return. */
const NOT_SHOWN_IN_BLOCK = new RegExp(
  `[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\ud800-\\udfff\\ufdd0-\\ufdef\\ufffe\\uffff${PLANE_ENDS}]`,
  "gu",
);
/** Bidi embeddings, overrides, isolates and marks. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text with its bidi embeddings, overrides, isolates and marks removed (what `cleanText` does `inline`, alone). */
export const withoutBidiControls = (text: string): string => text.replace(BIDI_CONTROLS, "");

/**
 * The one cleaning of a publisher's text for every page, feed, badge and answer that shows it
 * (docs/decisions.md#rendering): tab and line breaks become a space, every other control character,
 * lone surrogate and noncharacter U+FFFD. `inline` is for text that shares a line with no element to
 * isolate it (a title, a feed, a terminal): its bidi controls are removed too; `isolated` text sits in
 * its own `<bdi>` and keeps them; a `block` (a snippet to copy, shown as it is) keeps its lines and tabs.
 */
export function cleanText(text: string, where: "isolated" | "inline" | "block" = "isolated"): string {
  const clean = (where === "block" ? text : text.replace(LINE_CONTROLS, " ")).replace(
    where === "block" ? NOT_SHOWN_IN_BLOCK : NOT_SHOWN,
    "\uFFFD",
  );
  return where === "inline" ? withoutBidiControls(clean) : clean;
}

/**
 * Text cut at `max` code points, the cut marked with an ellipsis and never inside a surrogate pair;
 * always well-formed, otherwise as it was (docs/decisions.md#validation). Walks no further than `max`.
 */
export function cut(text: string, max: number): string {
  if (text.length <= max) return wellFormed(text);
  let units = 0;
  let points = 0;
  let keep = 0;
  for (const ch of text) {
    if (points === max - 1) keep = units;
    if (points === max) return `${wellFormed(text.slice(0, keep))}${CUT_MARK}`;
    units += ch.length;
    points++;
  }
  return wellFormed(text);
}

/** Bytes of `text` in UTF-8, a lone surrogate counted as the U+FFFD it is written as. */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Text cut to at most `max` bytes of UTF-8, the mark included, at a code point; well-formed. */
export function cutBytes(text: string, max: number): string {
  if (text.length * 3 <= max || (text.length <= max && utf8Bytes(text) <= max)) return wellFormed(text);
  const room = max - utf8Bytes(CUT_MARK);
  let units = 0;
  let used = 0;
  for (const ch of text) {
    const size = utf8Bytes(ch);
    if (used + size > room) break;
    used += size;
    units += ch.length;
  }
  return `${wellFormed(text.slice(0, units))}${CUT_MARK}`;
}

/** Cleaned (`cleanText`) and cut at `max` code points: publisher text as it is kept and shown. */
export const clip = (text: string, max: number): string => cleanText(cut(text, max));

export const clipName = (text: string) => clip(text, MAX_NAME_LENGTH);
export const clipDescription = (text: string) => clip(text, MAX_DESCRIPTION_LENGTH);
/** A problem's message or detail as it is kept: cut, not cleaned (a surface cleans what it shows). */
export const keptMessage = (text: string) => (text.length <= MAX_MESSAGE_LENGTH ? text : cut(text, MAX_MESSAGE_LENGTH));
/** An id or URL quoted in a message, or kept where a longer one was not read: at most {@link MAX_ID_BYTES}. */
export const keptId = (text: string) => cutBytes(text, MAX_ID_BYTES);

/** Whether every string of a JSON value, keys included, is within `max` code units. */
function fits(value: unknown, max: number): boolean {
  if (typeof value === "string") return value.length <= max;
  if (Array.isArray(value)) return value.every((v) => fits(v, max));
  if (typeof value === "object" && value !== null) return Object.entries(value).every(([k, v]) => k.length <= max && fits(v, max));
  return true;
}

/** A JSON value with every string cut at `max`. Own keys only, `__proto__` among them, as JSON.parse made them. */
function cutCopy(value: unknown, max: number): unknown {
  if (typeof value === "string") return cut(value, max);
  if (Array.isArray(value)) return value.map((v) => cutCopy(v, max));
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [cut(k, max), cutCopy(v, max)]));
  return value;
}

const keptCopies = new WeakMap<object, unknown>();

/**
 * A publisher's JSON as an answer carries it (a claim's `claimed` and `document`,
 * docs/decisions.md#the-result-record): every string, keys too, cut at {@link MAX_DESCRIPTION_LENGTH}
 * with the mark, the shape as published. The value itself when nothing is longer. Remembered per
 * value, so a cached document is copied once and the readers that remember parses per value
 * (./lenient.ts `parsedOnce`) still find it. Verification reads the document whole, never this.
 */
export function keptJson(value: unknown): unknown {
  if (typeof value === "string") return value.length <= MAX_DESCRIPTION_LENGTH ? value : cut(value, MAX_DESCRIPTION_LENGTH);
  if (typeof value !== "object" || value === null) return value;
  const copied = keptCopies.get(value);
  if (copied !== undefined) return copied;
  const kept = fits(value, MAX_DESCRIPTION_LENGTH) ? value : cutCopy(value, MAX_DESCRIPTION_LENGTH);
  keptCopies.set(value, kept);
  return kept;
}

/** A URL may become a link only when it is absolute `https:` or `http:` (docs/decisions.md#validation). */
export function safeUrl(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  return url.href;
}
