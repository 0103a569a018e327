import { searchTerms } from "../store/search.ts";

export type Segment = { text: string; marked: boolean };

/**
 * `text` cut where a word starts with one of the searched words (docs/decisions.md#search), compared
 * as the index compares them: case and accents ignored. Every character of `text` is kept, in order.
 */
export function markWords(text: string, search: string): Segment[] {
  const terms = searchTerms(search);
  if (terms.length === 0) return [{ text, marked: false }];
  const out: Segment[] = [];
  let last = 0;
  for (const m of text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu)) {
    const folded = searchTerms(m[0])[0] ?? "";
    if (!terms.some((w) => folded.startsWith(w))) continue;
    if (m.index > last) out.push({ text: text.slice(last, m.index), marked: false });
    out.push({ text: m[0], marked: true });
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last), marked: false });
  return out;
}
