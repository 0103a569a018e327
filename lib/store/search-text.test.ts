import { describe, expect, it } from "vitest";
import { fold, foldedTerms, MAX_WORD_LENGTH, prefixQuery, searchColumns, typoQuery } from "./search-text.ts";

describe("one folding of text (docs/decisions.md#search)", () => {
  it.each([
    ["ø, æ, œ", "Ærøskøbing Œuvre", ["aeroskobing", "oeuvre"]],
    ["ł", "Łódź", ["lodz"]],
    ["ß and ẞ", "Straße STRAẞE", ["strasse", "strasse"]],
    ["đ, ð, þ", "Đorđe Guðrún Þór", ["dorde", "gudrun", "thor"]],
    ["ı and İ", "Işıl İstanbul", ["isil", "istanbul"]],
    ["letters with marks", "Nguyễn Crème Ñandú Zoë", ["nguyen", "creme", "nandu", "zoe"]],
    ["Greek", "Οδυσσέας", ["οδυσσεασ"]],
    ["Arabic vowel marks", "مُحَمَّد", ["محمد"]],
    ["Hebrew points", "שָׁלוֹם", ["שלום"]],
    ["compatibility forms", "ＴＯＫＹＯ ﬁsh ①", ["tokyo", "fish", "1"]],
  ])("%s", (_family, text, words) => {
    expect(foldedTerms(text)).toEqual(words);
  });

  it("keeps separators, drops words too long to index", () => {
    expect(fold("Café-Müller, Zürich")).toBe("cafe-muller, zurich");
    expect(foldedTerms(`a ${"x".repeat(MAX_WORD_LENGTH + 1)} b`)).toEqual(["a", "b"]);
  });

  it("an entity's columns: its names' words, every word, and the words kept for typos (not the top-level domain)", () => {
    const c = searchColumns({
      name: "Bjørn's \\ Studio",
      domain: "bjorn-studio.example",
      networkId: "§:entity:bjorn-studio.example",
      claims: ["Blog", null],
      description: "Furniture",
    });
    expect(c.search_names).toBe("'bjorn' 's' 'studio' 'example' 'entity'");
    expect(c.search).toBe("'bjorn' 's' 'studio' 'example' 'entity' 'blog' 'furniture'");
    expect(c.names).toEqual(["bjorn", "s", "studio"]);
  });

  it("queries are quoted lexemes: nothing typed reaches the query syntax", () => {
    expect(prefixQuery(["guild", "mak"])).toEqual(["'guild':*", "'mak':*"]);
    expect(typoQuery([{ word: "guld", alike: ["guild", "gold"] }])).toEqual(["('guld':* | 'guild' | 'gold')"]);
  });
});
