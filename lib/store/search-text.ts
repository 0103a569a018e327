/**
 * The one folding of text for search (docs/decisions.md#search): what the index stores and what a
 * search looks for are both made here, so "Bjørn" typed is "bjorn" indexed. Case is ignored, marks
 * are removed (é → e, ñ → n, Arabic and Hebrew vowel points), compatibility forms are unfolded
 * (ﬁ → fi, full-width → ASCII), and the letters that carry no separable mark are spelled as people
 * type them without it (ø → o, ł → l, ß → ss, æ → ae, đ → d, ı → i, …). Words are runs of letters
 * and digits; everything else separates them.
 */
import { ownValue } from "../objects.ts";

/** Letters that Unicode does not decompose, and how they are written without their stroke, ligature or dot. */
const PLAIN: Record<string, string> = {
  ø: "o",
  ł: "l",
  ß: "ss",
  æ: "ae",
  œ: "oe",
  đ: "d",
  ð: "d",
  þ: "th",
  ı: "i",
  ħ: "h",
  ŧ: "t",
  ŋ: "n",
  ĸ: "k",
  ƒ: "f",
  ɨ: "i",
  ʉ: "u",
  ƀ: "b",
  ƶ: "z",
  ȥ: "z",
  ǥ: "g",
  ɇ: "e",
  ς: "σ",
};
const PLAIN_LETTERS = new RegExp(`[${Object.keys(PLAIN).join("")}]`, "gu");

const ASCII = /^[\x20-\x7e]*$/;

/** Words longer than this are not indexed or searched (a tsvector refuses lexemes over 2 KB). */
export const MAX_WORD_LENGTH = 100;

/** `text` folded: lower case, no marks, plain letters (see above). Separators are kept. */
export function fold(text: string): string {
  // Printable ASCII has no marks, no compatibility forms and none of PLAIN's letters: lower case is all it needs.
  if (ASCII.test(text)) return text.toLowerCase();
  return text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .replace(PLAIN_LETTERS, (c) => ownValue(PLAIN, c) ?? c);
}

const indexable = (w: string) => w.length <= MAX_WORD_LENGTH;

/** The folded terms of `text` (what the index stores and a search looks for), in order, repeated as they come. */
export function foldedTerms(text: string): string[] {
  // Printable ASCII folded is lower case, whose letters and digits are a-z and 0-9: no Unicode classes to test.
  const words = ASCII.test(text) ? text.toLowerCase().match(/[a-z0-9]+/g) : fold(text).match(/[\p{L}\p{N}]+/gu);
  if (words === null) return [];
  return words.every(indexable) ? words : words.filter(indexable);
}

/** What an entity is searched by (docs/decisions.md#search). */
export type SearchText = {
  name: string | null;
  domain: string;
  networkId: string | null;
  /** What its claims are called: property names, credential titles, the names it gives issuers (null: none). */
  claims: (string | null)[];
  description: string | null;
};

/** The most text of claims' names an entity is searched by. */
const MAX_CLAIM_TEXT = 20_000;

/** A word of a tsvector or tsquery written as a quoted lexeme; folded words hold no quote, but none is trusted to. */
const lexeme = (word: string) =>
  word.includes("'") || word.includes("\\") ? `'${word.replace(/\\/g, "\\\\").replace(/'/g, "''")}'` : `'${word}'`;

/**
 * An entity's search columns (migration 7), as tsvector literals: `search_names`, the words of its
 * names (the name, the domain and the network_id), and `search`, every word it is searched by (its
 * names, what its claims are called, its description); and `names`, the distinct words of its name
 * and of its domain but the last label (a top-level domain is in every other name), which the typo
 * table keeps. Built here, not by an engine's parser, so both engines hold exactly the words this
 * module makes.
 */
export function searchColumns(text: SearchText): { search: string; search_names: string; names: string[] } {
  const names = new Set(foldedTerms(`${text.name ?? ""} ${text.domain.replace(/\.[^.]*$/, "")}`));
  const named = new Set(names);
  for (const w of foldedTerms(`${text.domain} ${text.networkId ?? ""}`)) named.add(w);
  const all = new Set(named);
  let claims = "";
  for (const c of text.claims) {
    if (c !== null) claims = claims === "" ? c : `${claims} ${c}`;
    if (claims.length >= MAX_CLAIM_TEXT) break;
  }
  for (const w of foldedTerms(claims.slice(0, MAX_CLAIM_TEXT))) all.add(w);
  for (const w of foldedTerms(text.description ?? "")) all.add(w);
  return { search: vector(all), search_names: vector(named), names: [...names] };
}

/** Words as a tsvector literal: each a quoted lexeme, a space between. */
function vector(words: Set<string>): string {
  let out = "";
  for (const w of words) out = out === "" ? lexeme(w) : `${out} ${lexeme(w)}`;
  return out;
}

/** The parts of a tsquery literal that all must match (joined by `&`): each word, as a prefix. */
export function prefixQuery(words: string[]): string[] {
  return words.map((w) => `${lexeme(w)}:*`);
}

/** The parts of a tsquery literal that all must match: each word as a prefix or as one of its look-alikes (whole words). */
export function typoQuery(groups: { word: string; alike: string[] }[]): string[] {
  return groups.map((g) => `(${[`${lexeme(g.word)}:*`, ...g.alike.map(lexeme)].join(" | ")})`);
}
