/** Display rules shared by every surface (docs/decisions.md#validation display limits, docs/decisions.md#rendering links). */

export const MAX_NAME_LENGTH = 300;
export const MAX_DESCRIPTION_LENGTH = 5000;

/** Cuts text for display at a code-point boundary, marking the cut with an ellipsis. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
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
