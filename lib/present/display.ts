/** Display rules shared by every surface (docs/decisions.md#validation display limits, docs/decisions.md#rendering links). */

// The limits themselves belong to reading documents; every surface takes them from here.
export { clip, clipDescription, clipName, MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, safeUrl, wellFormed } from "../documents/display-limits";

const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text for a place that cannot isolate it, such as the document title: bidi embeddings, overrides,
 * isolates and marks removed, so untrusted text cannot reorder what follows it. In the page, such
 * text sits in its own element (`<bdi>` where it shares a line) instead (docs/decisions.md#rendering).
 */
export const withoutBidiControls = (text: string): string => text.replace(BIDI_CONTROLS, "");

/** `rel` of every outbound link (docs/decisions.md#rendering): never `me`. */
export const OUTBOUND_REL = "nofollow ugc noopener noreferrer";
