/**
 * Text written into XML (the sitemaps, the Atom feeds): the five characters XML gives meaning to
 * escaped, and what XML 1.0 cannot hold at all (control characters, lone surrogates, U+FFFE and
 * U+FFFF) replaced by U+FFFD, so that a publisher's text never makes a document a parser refuses.
 */
import { ownValue } from "ident-resolver";

const MEANING: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };
// Every character XML 1.0 §2.2 excludes: C0 controls but tab, newline and return; lone surrogates; U+FFFE/U+FFFF.
const NOT_XML =
  // eslint-disable-next-line no-control-regex -- the control characters are what it finds
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export const xml = (text: string): string => text.replace(NOT_XML, "\ufffd").replace(/[&<>"']/g, (c) => ownValue(MEANING, c) ?? c);
