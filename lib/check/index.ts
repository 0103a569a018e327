/** `ident-resolver/check` (docs/library.md): the publisher check of a domain or of a document's text. */
export { checkText } from "./file.ts";
export { checkFile, UnreadableFile } from "./read-file.ts";
export { checkDomain, reportOf } from "./live.ts";
export { CHECK_SCHEMA, type CheckReport, type DocumentReport, type Finding } from "./report.ts";
