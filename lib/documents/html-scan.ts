/**
 * A linear scan of raw HTML for the few start tags the resolver reads (SPEC §4 embeds, SPEC §6 rel=me).
 * It skips comments and the contents of raw-text elements as the HTML tokenizer does, and never
 * builds a tree: a hostile page of deeply nested elements costs one pass, where a full parse is
 * quadratic in the nesting depth.
 */

/** Elements whose content is text up to their end tag, so tags inside them are not tags. */
const RAW_TEXT = new Set(["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes"]);

export type ScannedTag = {
  /** Lower-cased tag name. */
  name: string;
  /** The start tag as written, from `<` to `>`. */
  tag: string;
  /** The raw text up to the end tag, for raw-text elements; "" otherwise. */
  text: string;
};

const TAG_NAME = /[a-zA-Z][a-zA-Z0-9-]*/y;

/** Index of the `>` closing a start tag that begins at `from`, skipping quoted values; -1 if none. */
function tagEnd(html: string, from: number): number {
  let quote = "";
  for (let i = from; i < html.length; i++) {
    const c = html[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === ">") {
      return i;
    }
  }
  return -1;
}

/** Index where the end tag `</name` starts, at or after `from`, or the end of the input. */
function endTagStart(html: string, lower: string, name: string, from: number): number {
  const needle = `</${name}`;
  for (let i = lower.indexOf(needle, from); i >= 0; i = lower.indexOf(needle, i + 1)) {
    const after = lower[i + needle.length];
    if (after === undefined || after === ">" || after === "/" || /\s/.test(after)) return i;
  }
  return html.length;
}

/**
 * Every start tag named in `wanted`, in document order, at most `limit` of them. Runs in time
 * linear in the input.
 */
export function scanTags(html: string, wanted: ReadonlySet<string>, limit = 10_000): ScannedTag[] {
  const lower = html.toLowerCase();
  const found: ScannedTag[] = [];
  let i = 0;
  while (found.length < limit) {
    const lt = html.indexOf("<", i);
    if (lt < 0) break;
    if (html.startsWith("<!--", lt)) {
      const close = html.indexOf("-->", lt + 4);
      if (close < 0) break;
      i = close + 3;
      continue;
    }
    TAG_NAME.lastIndex = lt + 1;
    const m = TAG_NAME.exec(html);
    if (!m) {
      i = lt + 1;
      continue;
    }
    const name = m[0].toLowerCase();
    const gt = tagEnd(html, TAG_NAME.lastIndex);
    if (gt < 0) break; // an unclosed start tag swallows the rest of the document
    const tag = html.slice(lt, gt + 1);
    i = gt + 1;
    let text = "";
    if (RAW_TEXT.has(name)) {
      const end = endTagStart(html, lower, name, i);
      text = html.slice(i, end);
      i = end;
    }
    if (wanted.has(name)) found.push({ name, tag, text });
  }
  return found;
}
