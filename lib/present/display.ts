/** Display rules shared by every surface (docs/decisions.md#validation display limits, docs/decisions.md#rendering links). */

export const MAX_NAME_LENGTH = 300;
export const MAX_DESCRIPTION_LENGTH = 5000;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Untrusted text made well-formed: a lone surrogate becomes U+FFFD. Left alone, it is written into
 * the HTML and the page's data differently, and React then discards the server's HTML.
 */
export const wellFormed = (text: string): string => text.replace(LONE_SURROGATE, "\uFFFD");

const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text for a place that cannot isolate it, such as the document title: bidi embeddings, overrides,
 * isolates and marks removed, so untrusted text cannot reorder what follows it. In the page, such
 * text sits in its own element (`<bdi>` where it shares a line) instead (docs/decisions.md#rendering).
 */
export const withoutBidiControls = (text: string): string => text.replace(BIDI_CONTROLS, "");

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

/** `rel` of every outbound link (docs/decisions.md#rendering): never `me`. */
export const OUTBOUND_REL = "nofollow ugc noopener noreferrer";
