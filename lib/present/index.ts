/** `ident-resolver/present` (docs/library.md): a result in plain words, as the pages and the CLI show it. */
export { cleanText, clip, clipDescription, clipName, MAX_NAME_LENGTH, OUTBOUND_REL, withoutBidiControls } from "./display.ts";
export { CATALOGUE, reasonAnchor, reasonText, said, statusText, type Settings } from "./explain.ts";
export { markWords, type Segment } from "./marks.ts";
export { claimView, entityView, type ClaimKind, type ClaimView, type EntityView, type SourceView } from "./view.ts";
export { changeText, exactly, when } from "./when.ts";
