/** Display rules shared by every surface (docs/decisions.md#validation display limits, docs/decisions.md#rendering links). */

// The limits and the one cleaning belong to reading documents; every surface takes them from here.
export {
  cleanText,
  clip,
  clipDescription,
  clipName,
  MAX_CLAIM_DESCRIPTION_LENGTH,
  MAX_CLAIM_TECHNICAL_LENGTH,
  MAX_CLAIM_TYPE_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_NAME_LENGTH,
  safeUrl,
  withoutBidiControls,
} from "../documents/display-limits.ts";

/** `rel` of every outbound link (docs/decisions.md#rendering): never `me`. */
export const OUTBOUND_REL = "nofollow ugc noopener noreferrer";
