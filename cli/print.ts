import { cleanText } from "ident-resolver/present";

/**
 * Untrusted text for a terminal: the one cleaning of publisher text (docs/decisions.md#rendering),
 * as a line with nothing to isolate it: line breaks a space, escape sequences and other control
 * characters U+FFFD, bidi controls removed.
 */
export const printable = (text: string): string => cleanText(text, "inline");
