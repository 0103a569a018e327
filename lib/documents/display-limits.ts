/**
 * The display limits of untrusted text and links (docs/decisions.md#validation): what the documents'
 * reader, the JSON-LD and every surface apply alike. Presentation beyond them is in lib/present/display.ts.
 */

export const MAX_NAME_LENGTH = 300;
export const MAX_DESCRIPTION_LENGTH = 5000;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Untrusted text made well-formed: a lone surrogate becomes U+FFFD. Left alone, it is written into
 * the HTML and the page's data differently, and React then discards the server's HTML.
 */
export const wellFormed = (text: string): string => text.replace(LONE_SURROGATE, "\uFFFD");

/** Cuts text for display at a code-point boundary, marking the cut with an ellipsis; always well-formed. */
export function clip(text: string, max: number): string {
  const chars = Array.from(wellFormed(text));
  return chars.length <= max ? chars.join("") : `${chars.slice(0, max - 1).join("")}…`;
}

export const clipName = (text: string) => clip(text, MAX_NAME_LENGTH);
export const clipDescription = (text: string) => clip(text, MAX_DESCRIPTION_LENGTH);

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
