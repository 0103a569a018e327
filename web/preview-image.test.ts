import { readFileSync } from "node:fs";
import { PNG } from "pngjs";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { FetchMode, FetchOutcome } from "ident-resolver/node";
import { createResolverCore } from "ident-resolver";
import type { Claim } from "ident-resolver";
import type { FetchRefusal } from "ident-resolver/traffic";
import { answered } from "../test/helpers/answered";
import {
  cachedFacts,
  cardKey,
  claimWords,
  COLD_MAX_AGE_S,
  createPreviewCache,
  entityCard,
  MAX_HEADING,
  PREVIEW_COLORS,
  previewAlt,
  pngResponse,
  siteCard,
  siteImageMetadata,
  UNSETTLED_MAX_AGE_S,
  type EntityFacts,
  type PreviewCard,
} from "./preview-image";
import { entityPreview, glyphsFor, renderCard, sitePreview } from "./preview-image-render";
import { drawable, EMOJI, fontCoverage } from "./preview-text";

const facts = (name: string | null, claims: EntityFacts["claims"] = { verified: 3, total: 4 }): EntityFacts => ({
  domain: "alice.example",
  name,
  status: "accepted",
  statusText: "accepted",
  claims,
});

/** Dozens of combining marks on every letter ("Z̸̢̛a̴͇͝l̷g̶o̵" and worse). */
const zalgo = Array.from(
  "Zalgo",
  (letter, i) => letter + Array.from({ length: 36 }, (_, k) => String.fromCodePoint(0x300 + ((i * 7 + k * 5) % 0x70))).join(""),
).join("");

const HOSTILE: [string, string | null][] = [
  ["an ordinary name", "Alice Example"],
  ["a very long name (300 characters)", "Wolfeschlegelsteinhausenbergerdorff Grand Consolidated Holdings ".repeat(5).slice(0, 300)],
  ["a 300-character name without a space", "W".repeat(300)],
  [
    "right-to-left (Arabic, Hebrew) with bidi overrides",
    "\u202Eevil.example\u202C شركة المثال المحدودة \u202Bשלום עולם\u202C \u2067x\u2069 Ltd",
  ],
  ["only right-to-left", "\u202Eشركة المثال\u202C"],
  ["emoji, ZWJ sequences and flags", "Rocket 🚀 Family 👨‍👩‍👧‍👦 Flags 🇫🇷🇯🇵🏳️‍🌈 Keycap 1️⃣ ☺️ 👍🏽 Co"],
  ["combining marks, dozens per letter", zalgo],
  ["one conjunct of 150 letters (one grapheme since Unicode 15.1)", `${"\u0915\u094d".repeat(150)}\u0915 Ltd`],
  ["CJK and other scripts", "株式会社サンプル 예시 ตัวอย่าง देवनागरी"],
  ["the scripts of South Asia, South-East Asia, the Caucasus and Ethiopia", "স্ত্রী தமிழ் ਪੰਜਾਬੀ ಕನ್ನಡ ශ්‍රී ខ្មែរ မြန်မာ ქართული Հայերեն አማርኛ"],
  ["control and format characters", "A\u0000B\u0007C\u200B\u200D\u2028\u00AD\uFEFF\uFFFD\uD800 D"],
  ["an empty name", ""],
  ["no name", null],
];

const BG = [0xff, 0xff, 0xff];

/** Whether every pixel of the rectangle is the background colour. */
function blank(png: PNG, x0: number, y0: number, x1: number, y1: number): boolean {
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      const i = (y * png.width + x) * 4;
      if (png.data[i] !== BG[0] || png.data[i + 1] !== BG[1] || png.data[i + 2] !== BG[2]) return false;
    }
  return true;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("preview images: hostile names still render inside the image (docs/decisions.md#crawlers)", () => {
  beforeAll(async () => {
    // The first drawing starts satori's layout engine and HarfBuzz, WebAssembly from their packages:
    // if either asks `fetch`, it is for a data: URL. Nothing else, ever.
    const urls: string[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn((url: unknown) => {
        urls.push(String(url));
        return Promise.reject(new Error("a preview image must fetch nothing"));
      }),
    );
    expect(PNG.sync.read(await renderCard(siteCard())).width).toBe(1200);
    vi.unstubAllGlobals();
    expect(urls.every((url) => url.startsWith("data:"))).toBe(true);
  });

  it("the background is the page's", () => {
    expect(PREVIEW_COLORS.bg).toBe("#ffffff");
  });

  for (const [what, name] of HOSTILE) {
    it(`${what}: a 1200×630 PNG, its text inside the margins, and nothing fetched`, async () => {
      const fetch = vi.fn(() => Promise.reject(new Error("a preview image must fetch nothing")));
      vi.stubGlobal("fetch", fetch);
      const card = entityCard(facts(name), glyphsFor(name ?? ""));
      const png = PNG.sync.read(await renderCard(card));
      expect(fetch).not.toHaveBeenCalled();
      expect([png.width, png.height]).toEqual([1200, 630]);
      // The right-most columns and the bottom rows are background: no text ran past its box.
      expect(blank(png, png.width - 64, 0, png.width, png.height)).toBe(true);
      expect(blank(png, 0, png.height - 48, png.width, png.height)).toBe(true);
      expect(blank(png, 0, 0, 64, png.height)).toBe(true);
      expect(blank(png, 0, 0, png.width, 56)).toBe(true);
      // And something is drawn where the heading goes.
      expect(blank(png, 72, 150, 1128, 420)).toBe(false);
    });
  }

  /** The columns of the heading's band (y 150–420) that hold ink: the first and the last. */
  const inkColumns = (png: PNG): [number, number] => {
    let first = -1;
    let last = -1;
    for (let x = 0; x < png.width; x++)
      if (!blank(png, x, 150, x + 1, 420)) {
        if (first < 0) first = x;
        last = x;
      }
    return [first, last];
  };

  /** The runs of ink in the band y0–y1, left to right, split where at least `gap` columns are blank: [first, last] of each. */
  const inkRuns = (png: PNG, y0 = 150, y1 = 420, gap = 12): [number, number][] => {
    const runs: [number, number][] = [];
    for (let x = 0; x < png.width; x++) {
      if (blank(png, x, y0, x + 1, y1)) continue;
      const last = runs[runs.length - 1];
      if (last && x - last[1] <= gap) last[1] = x;
      else runs.push([x, x]);
    }
    return runs;
  };
  const width = ([first, last]: [number, number]) => last - first + 1;
  const heading = async (text: string, lines = 1, size = 80) =>
    PNG.sync.read(
      await renderCard({
        kind: "entity",
        heading: text,
        headingSize: size,
        headingLines: lines,
        domain: null,
        claims: "",
        allVerified: false,
      }),
    );

  it("a name that reads right to left is drawn against the right margin, its first word rightmost", async () => {
    const [hebrewFirst, hebrewLast] = inkColumns(await heading("שלום עולם"));
    expect(hebrewLast).toBeGreaterThan(1100);
    expect(hebrewFirst).toBeGreaterThan(600);
    const [latinFirst, latinLast] = inkColumns(await heading("Alice Example"));
    expect(latinFirst).toBeLessThan(80);
    expect(latinLast).toBeLessThan(700);
    // A one-letter word and a long one: the first read is the rightmost.
    const short = width(inkRuns(await heading("א"))[0] ?? [0, 0]);
    const long = width(inkRuns(await heading("שלומות"))[0] ?? [0, 0]);
    expect(long).toBeGreaterThan(3 * short);
    const pair = inkRuns(await heading("א שלומות"));
    expect(Math.abs(width(pair[pair.length - 1] ?? [0, 0]) - short)).toBeLessThan(4);
    expect(Math.abs(width(pair[0] ?? [0, 0]) - long)).toBeLessThan(4);
    // Inside a name that reads left to right, the right-to-left words are in display order too.
    const mixed = inkRuns(await heading("Acme א שלומות Labs")).map(width);
    expect(mixed).toHaveLength(4);
    expect(Math.abs((mixed[1] ?? 0) - long)).toBeLessThan(4);
    expect(Math.abs((mixed[2] ?? 0) - short)).toBeLessThan(4);
  });

  it("the whole name's direction holds on every line: a right-to-left name with Latin words is right-aligned on each", async () => {
    const png = await heading('חברת הדוגמה הישראלית Acme Holdings International Group Limited בע"מ', 3, 48);
    // The lines of text: runs of rows with ink, split by blank rows.
    const rows: [number, number][] = [];
    for (let y = 130; y < 470; y++) {
      if (blank(png, 72, y, 1128, y + 1)) continue;
      const last = rows[rows.length - 1];
      if (last && y - last[1] <= 6) last[1] = y;
      else rows.push([y, y]);
    }
    const ends = rows.map(([y0, y1]) => {
      const runs = inkRuns(png, y0, y1 + 1, 40);
      return (runs[runs.length - 1] ?? [0, 0])[1];
    });
    expect(ends.length).toBeGreaterThanOrEqual(2);
    for (const end of ends) expect(end).toBeGreaterThan(1100);
  });

  it("emoji are drawn as their pictures, in colour", async () => {
    const png = PNG.sync.read(await renderCard(entityCard(facts("🚀 🇫🇷 \u2764\ufe0e"), glyphsFor(""))));
    let coloured = 0;
    for (let y = 150; y < 420; y++)
      for (let x = 72; x < 600; x++) {
        const i = (y * png.width + x) * 4;
        const [r, g, b] = [png.data[i] ?? 0, png.data[i + 1] ?? 0, png.data[i + 2] ?? 0];
        if (Math.max(r, g, b) - Math.min(r, g, b) > 80) coloured++;
      }
    expect(coloured).toBeGreaterThan(500);
  });

  it("text no font has, drawn as it is, fetches nothing: satori's request for a font or a picture is answered with none", async () => {
    const fetch = vi.fn(() => Promise.reject(new Error("a preview image must fetch nothing")));
    vi.stubGlobal("fetch", fetch);
    const raw: PreviewCard = {
      kind: "entity",
      heading: "Runes ᚠᚢᚦ, Cherokee ᏣᎳᎩ, an emoji Twemoji lacks 🐦‍🔥 and one it has 🚀",
      headingSize: 80,
      headingLines: 1,
      domain: null,
      claims: "",
      allVerified: false,
    };
    expect(PNG.sync.read(await renderCard(raw)).width).toBe(1200);
    expect(fetch).not.toHaveBeenCalled();
  });

  it("every text drawn is made of code points the fonts have, or of emoji Twemoji has a picture of", () => {
    for (const [, name] of HOSTILE) {
      const glyphs = glyphsFor(name ?? "");
      const card = entityCard(facts(name), glyphs);
      if (card.kind !== "entity") throw new Error("an entity card");
      for (const text of [card.heading, card.domain ?? "", card.claims]) {
        for (const { segment } of new Intl.Segmenter("en", { granularity: "grapheme" }).segment(text)) {
          if (EMOJI.test(segment)) expect(glyphs.picture(segment), segment).toBe(true);
          else
            for (const p of segment)
              expect(glyphs.covered.has(p.codePointAt(0) ?? -1), `U+${p.codePointAt(0)?.toString(16)} in ${JSON.stringify(text)}`).toBe(
                true,
              );
        }
      }
    }
  });

  it("the site's image: 1200×630, inside its margins, nothing fetched", async () => {
    const fetch = vi.fn(() => Promise.reject(new Error("a preview image must fetch nothing")));
    vi.stubGlobal("fetch", fetch);
    const png = PNG.sync.read(await renderCard(siteCard()));
    expect(fetch).not.toHaveBeenCalled();
    expect([png.width, png.height]).toEqual([1200, 630]);
    expect(blank(png, png.width - 64, 0, png.width, png.height)).toBe(true);
    expect(blank(png, 0, png.height - 48, png.width, png.height)).toBe(true);
  });
});

describe("drawable text", () => {
  const glyphs = glyphsFor("");
  it("keeps what the fonts have: Latin with its accents, Cyrillic, Hebrew, Arabic, punctuation", () => {
    expect(drawable("Ça va, Zoë — Ёжик № 5…", glyphs)).toBe("Ça va, Zoë — Ёжик № 5…");
    // Decomposed accents are composed first.
    expect(drawable("Zoe\u0308", glyphs)).toBe("Zoë");
    expect(drawable("Acme שלום مرحبا Labs", glyphs)).toBe("Acme שלום مرحبا Labs");
    expect(drawable("Ελληνικά ตัวอย่าง देवनागरी Tiếng Việt", glyphs)).toBe("Ελληνικά ตัวอย่าง देवनागरी Tiếng Việt");
  });
  it("keeps the scripts of South and South-East Asia, the Caucasus and Ethiopia whole, conjuncts and all", () => {
    const words = "বাংলা স্ত্রী ਪੰਜਾਬੀ ગુજરાતી தமிழ் తెలుగు ಕನ್ನಡ മലയാളം ශ්‍රී ලංකා हिन्दी स्त्री ລາວ ខ្មែរ မြန်မာ ქართული Հայերեն አማርኛ";
    expect(drawable(words, glyphs)).toBe(words);
    // Marks counted on each letter of a conjunct, not on the whole of it; a pile on one letter is still cut.
    expect(drawable("ক্ষ্ম্য", glyphs)).toBe("ক্ষ্ম্য");
    expect(drawable(`ক${"\u09cd\u09bf".repeat(10)}`, glyphs)).toBe("ক\u09cd\u09bf\u09cd");
    // A conjunct is one grapheme however long (Unicode 15.1): five letters of it are kept, as in the longest written.
    expect(drawable("\u0930\u094d\u0924\u094d\u0938\u094d\u0928\u094d\u092f", glyphs)).toBe(
      "\u0930\u094d\u0924\u094d\u0938\u094d\u0928\u094d\u092f",
    );
    expect(drawable(`${"\u0915\u094d".repeat(150)}\u0915 Ltd`, glyphs)).toBe(`${"\u0915\u094d".repeat(5)} Ltd`);
    // Myanmar's signs that Unicode segments apart (ာ, း) stay with their letter, two at most; alone they go.
    expect(drawable("ဒေါ်အောင်ဆန်းစုကြည် ကျော် ဝင်း မြွေ", glyphs)).toBe("ဒေါ်အောင်ဆန်းစုကြည် ကျော် ဝင်း မြွေ");
    expect(drawable("မာာာာ", glyphs)).toBe("မာာ");
    expect(drawable("Aာ", glyphs)).toBe("A");
    // Three marks on a letter: a nukta, a vowel sign and a nasal; Hebrew's dagesh, shin dot and vowel.
    expect(drawable("ज़िंदगी ਸ਼ਾਂਤੀ ញ៉ាំ שַּׁבָּת", glyphs)).toBe("ज़िंदगी ਸ਼ਾਂਤੀ ញ៉ាំ שַּׁבָּת");
    expect(drawable("ာ ok", glyphs)).toBe("ok");
  });
  it("keeps emoji Twemoji has a picture of, ZWJ sequences, flags and keycaps whole; drops the others", () => {
    expect(drawable("A 🚀 👨‍👩‍👧 🇫🇷 1️⃣ B", glyphs)).toBe("A 🚀 👨‍👩‍👧 🇫🇷 1️⃣ B");
    // Named by Twemoji without its U+FE0F although it is a sequence.
    expect(drawable("\u{1f441}\ufe0f\u200d\u{1f5e8}\ufe0f", glyphs)).toBe("\u{1f441}\ufe0f\u200d\u{1f5e8}\ufe0f");
    // The phoenix (Unicode 15.1) is newer than the pictures; a lone regional indicator is no flag.
    expect(drawable("A \u{1f426}\u200d\u{1f525} \u{1f1eb} B", glyphs)).toBe("A B");
    // Symbols no font has, bare or asked as text (U+FE0E), drawn as their pictures; one a font has (☺) as text.
    expect(drawable("I \u2764 NY \u2708\ufe0e \u263a", glyphs)).toBe("I \u2764\ufe0f NY \u2708\ufe0f \u263a");
  });
  it("drops the invisible characters satori passes over between emoji (which would join them into an unchecked sequence); keeps subdivision flags' tags", () => {
    expect(drawable("a\u200b🏻\u200b🏼 🚀\u2060🏽 ✈\u200b🏽 \u00adok", glyphs)).toBe("a ok");
    expect(drawable("Scotland 🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}", glyphs)).toBe(
      "Scotland 🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}",
    );
  });
  it("a mark on a space is a space, so a name of them is not wiped; what a dropped character kept apart is composed again", () => {
    expect(drawable(" \u0903 \u0903 \u0903 \u0903 Acme Ltd", glyphs)).toBe("Acme Ltd");
    expect(drawable("a🏽\u0301", glyphs)).toBe("\u00e1");
  });
  it("drops bidi controls, scripts no font has, stray marks, and marks past three on a letter; white space becomes one space", () => {
    expect(drawable("\u202Eevil\u202C", glyphs)).toBe("evil");
    expect(drawable("Runes ᚠᚢᚦ ok", glyphs)).toBe("Runes ok");
    expect(drawable("\u0301x", glyphs)).toBe("x");
    expect(drawable(" a\t\n\u00a0 b ", glyphs)).toBe("a b");
    const letters = drawable(zalgo, glyphs);
    expect(letters.normalize("NFD").replace(/\p{M}/gu, "")).toBe("Zalgo");
    for (const { segment } of new Intl.Segmenter("en", { granularity: "grapheme" }).segment(letters))
      expect(Array.from(segment).length, segment).toBeLessThanOrEqual(4);
  });
  it("ideographs, kana and Hangul only with the fonts that have them, loaded when a text has some", () => {
    expect(drawable("Acme 株式会社 예시", glyphs)).toBe("Acme");
    expect(drawable("Acme 株式会社 예시", glyphsFor("株式会社"))).toBe("Acme 株式会社 예시");
  });
  it("reads the cmap of a font: Geist has Latin and Cyrillic, no Hebrew, Arabic or emoji", () => {
    const geist = fontCoverage(readFileSync("node_modules/geist/dist/fonts/geist-sans/Geist-Regular.ttf"));
    expect(geist.has(0x41)).toBe(true);
    expect(geist.has(0x416)).toBe(true);
    expect(geist.has(0x5d0)).toBe(false);
    expect(geist.has(0x627)).toBe(false);
    expect(geist.has(0x1f680)).toBe(false);
    expect(() => fontCoverage(new TextEncoder().encode("not a font, only words"))).toThrow();
  });
});

describe("the card of an entity", () => {
  const covered = glyphsFor("");
  it("says the name, the domain and how many claims verify", () => {
    expect(entityCard(facts("Alice Example"), covered)).toMatchObject({
      heading: "Alice Example",
      domain: "alice.example",
      claims: "3 of 4 claims verified",
      allVerified: false,
    });
    expect(entityCard(facts("A", { verified: 1, total: 1 }), covered)).toMatchObject({
      claims: "1 of 1 claim verified",
      allVerified: true,
    });
  });
  it("the domain is the heading when there is no drawable name", () => {
    for (const name of [null, "", "\u{1f426}\u200d\u{1f525}", "\u202E\u0301ᚠ", "\u3164\u3164", "\u200b\u2060\u00ad"])
      expect(entityCard(facts(name), covered)).toMatchObject({ heading: "alice.example", domain: null });
  });
  it("a long name is cut, and drawn smaller on more lines", () => {
    const card = entityCard(facts("x".repeat(300)), covered);
    if (card.kind !== "entity") throw new Error("an entity card");
    expect(Array.from(card.heading)).toHaveLength(MAX_HEADING);
    expect(card.heading.endsWith("…")).toBe(true);
    expect(card.headingSize).toBeLessThan(entityCard(facts("Alice"), covered).kind === "entity" ? 80 : 0);
  });
  it("claims in words: none listed, not all cached, not accepted", () => {
    expect(claimWords(facts("A", { verified: 0, total: 0 }))).toBe("No claims listed");
    expect(claimWords(facts("A", { verified: null, total: 3 }))).toBe("3 claims listed");
    expect(claimWords({ status: "not_found", statusText: "no entity document", claims: { verified: null, total: 0 } })).toBe(
      "No entity document",
    );
  });
  it("the alt text of the page's image", () => {
    expect(previewAlt("Alice (alice.example)", "accepted", "accepted", { verified: 2, total: 3 })).toBe(
      "Alice (alice.example): 2 of 3 claims verified",
    );
    expect(previewAlt("Alice (alice.example)", "accepted", "accepted", null)).toBe("Alice (alice.example)");
    expect(previewAlt("alice.example", "rejected", "rejected", null)).toBe("alice.example: Rejected");
  });
  it("the site's image in the metadata: absolute under the public origin, with its size", () => {
    const meta = siteImageMetadata("https://ident.example");
    expect(meta.openGraph.images).toEqual([
      { url: "https://ident.example/preview.png", width: 1200, height: 630, alt: expect.stringContaining("ident resolver") },
    ]);
    expect(meta.twitter.card).toBe("summary_large_image");
  });
});

describe("the cache of rendered images", () => {
  const card = (n: number): PreviewCard => entityCard(facts(`Entity ${n}`), glyphsFor(""));

  it("returns the same Buffer for the same card, drawn once; another card is another key", async () => {
    const render = vi.fn(renderCard);
    const cache = createPreviewCache({ maxBytes: 1024 * 1024, render });
    const [a, b] = await Promise.all([cache.png(card(1)), cache.png(card(1))]);
    const c = await cache.png(card(1));
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(render).toHaveBeenCalledTimes(1);
    expect(cardKey(card(1))).toBe(cardKey(card(1)));
    expect(cardKey(card(2))).not.toBe(cardKey(card(1)));
    expect(cardKey(entityCard(facts("Entity 1", { verified: 4, total: 4 }), glyphsFor("")))).not.toBe(cardKey(card(1)));
    expect(cardKey(card(1)).startsWith("alice.example ")).toBe(true);
    expect(await cache.png(card(2))).not.toBe(a);
    expect(render).toHaveBeenCalledTimes(2);
  });

  it("holds no more bytes than its bound (whole Buffer sizes), least recently used first out", async () => {
    const render = vi.fn((c: PreviewCard) => Promise.resolve(Buffer.alloc(c.kind === "entity" ? 1000 + c.heading.length : 10)));
    const cache = createPreviewCache({ maxBytes: 5000, render });
    for (let n = 0; n < 20; n++) {
      await cache.png(card(n));
      expect(cache.bytes).toBeLessThanOrEqual(5000);
    }
    expect(cache.size).toBe(4);
    // The most recent is kept, the first is gone: drawn again.
    await cache.png(card(19));
    expect(render).toHaveBeenCalledTimes(20);
    await cache.png(card(0));
    expect(render).toHaveBeenCalledTimes(21);
  });

  it("with real images, the bound holds too", async () => {
    const cache = createPreviewCache({ maxBytes: 100_000, render: renderCard });
    for (let n = 0; n < 6; n++) {
      await cache.png(card(n));
      expect(cache.bytes).toBeLessThanOrEqual(100_000);
    }
    expect(cache.size).toBeGreaterThan(0);
  });

  it("a failed drawing is not kept", async () => {
    let fail = true;
    const cache = createPreviewCache({
      maxBytes: 10_000,
      render: () => (fail ? Promise.reject(new Error("boom")) : Promise.resolve(Buffer.alloc(10))),
    });
    await expect(cache.png(card(1))).rejects.toThrow("boom");
    fail = false;
    expect((await cache.png(card(1)))?.byteLength).toBe(10);
  });

  it("past its drawings at once, an entity not kept is not drawn (null: the route answers the site's image); the same card shares its drawing; the site's is drawn", async () => {
    const release: (() => void)[] = [];
    let drawn = 0;
    const cache = createPreviewCache({
      maxBytes: 10_000,
      maxDrawing: 1,
      render: () => new Promise<Buffer>((resolve) => release.push(() => (drawn++, resolve(Buffer.alloc(10))))),
    });
    const first = cache.png(card(1));
    const again = cache.png(card(1));
    expect(await cache.png(card(2))).toBeNull();
    const site = cache.png(siteCard());
    for (const r of release) r();
    expect(await first).toBe(await again);
    expect((await site)?.byteLength).toBe(10);
    expect(drawn).toBe(2);
    // Once the drawing is done, the other entity is drawn.
    const later = cache.png(card(2));
    release.at(-1)?.();
    expect((await later)?.byteLength).toBe(10);
    expect(drawn).toBe(3);
  });
});

describe("what the route answers", () => {
  it("nothing cached: the site's image, briefly cacheable; the same Buffer each time", async () => {
    const cold = await entityPreview(null);
    expect(cold.maxAgeS).toBe(COLD_MAX_AGE_S);
    expect(cold.png).toBe((await sitePreview()).png);
    const png = PNG.sync.read(cold.png);
    expect([png.width, png.height]).toEqual([1200, 630]);
  });
  it("an entity from cached data: public for an hour, the same Buffer for the same facts", async () => {
    const first = await entityPreview(facts("Alice Example"));
    const again = await entityPreview(facts("Alice Example"));
    expect(first.maxAgeS).toBe(3600);
    expect(again.png).toBe(first.png);
    const response = pngResponse(first.png, first.maxAgeS);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(Buffer.from(await response.arrayBuffer()).equals(first.png)).toBe(true);
  });
  it("an entity not accepted, or whose claims are not all cached: five minutes", async () => {
    expect((await entityPreview(facts("Alice Example", { verified: null, total: 2 }))).maxAgeS).toBe(UNSETTLED_MAX_AGE_S);
    const failed: EntityFacts = {
      domain: "alice.example",
      name: null,
      status: "not_found",
      statusText: "not found",
      claims: { verified: null, total: 0 },
    };
    expect((await entityPreview(failed)).maxAgeS).toBe(UNSETTLED_MAX_AGE_S);
  });
});

// ---------------------------------------------------------------------------------------------

type Site = Record<string, unknown>;

/** A fake fetcher over a map of URL → JSON body (404 otherwise); records every call. */
function fakeFetch(site: Site) {
  const calls: string[] = [];
  const fetch = async (url: string, mode: FetchMode): Promise<FetchOutcome | FetchRefusal> => {
    calls.push(`${mode} ${url}`);
    const meta = { url, finalUrl: url, contentType: "application/json", ms: 1 };
    const body = site[url];
    if (body === undefined) return { ...meta, ok: false, status: "not_found", httpStatus: 404, message: "404" };
    const text = JSON.stringify(body);
    return { ...meta, ok: true, status: "found", httpStatus: 200, body: text, bytes: text.length };
  };
  return { fetch, calls };
}

const ALICE = "§:entity:alice.example";
const ENTITY = {
  network_id: ALICE,
  details: { name: "Alice \u202Eevil\u202C Example" },
  properties: [{ id: "§:property:blog.example" }, { id: "§:property:shop.example" }],
};
/** Every document found: the blog names Alice as its owner, the shop someone else. */
const SITE: Site = {
  "https://alice.example/ident.json": ENTITY,
  "https://blog.example/ident-property.json": { ident_property: { id: "§:property:blog.example", ownership: [{ network_id: ALICE }] } },
  "https://shop.example/ident-property.json": {
    ident_property: { id: "§:property:shop.example", ownership: [{ network_id: "§:entity:bob.example" }] },
  },
};
const SETTINGS = { fetchTimeoutMs: 5000 };

describe("the facts of an entity, from the resolver's cache alone (docs/decisions.md#crawlers)", () => {
  const noStore = Promise.resolve(null);

  it("nothing cached: null, and nothing fetched", async () => {
    const { fetch, calls } = fakeFetch(SITE);
    const resolver = createResolverCore({ fetch });
    expect(await cachedFacts({ resolveEntityStaged: resolver.resolveEntityStaged, store: noStore }, "alice.example", SETTINGS)).toBeNull();
    expect(calls).toEqual([]);
  });

  it("once looked up: the name and the count of verified claims, without a fetch", async () => {
    const { fetch, calls } = fakeFetch(SITE);
    const resolver = createResolverCore({ fetch });
    answered(await resolver.resolveEntity("alice.example"));
    const before = calls.length;
    const found = await cachedFacts({ resolveEntityStaged: resolver.resolveEntityStaged, store: noStore }, "alice.example", SETTINGS);
    expect(calls.length).toBe(before);
    expect(found).toEqual({
      domain: "alice.example",
      name: "Alice \u202Eevil\u202C Example",
      status: "accepted",
      statusText: "accepted",
      claims: { verified: 1, total: 2 },
    });
    const card = entityCard(found!, glyphsFor(`${found!.name ?? ""} ${found!.domain}`));
    expect(card).toMatchObject({ heading: "Alice evil Example", claims: "1 of 2 claims verified" });
  });

  it("claims counted once, as the badge and the index count them: a property listed twice, once in capitals, and an unreachable one are 1 of 2 (docs/decisions.md#counting-claims)", async () => {
    const listed = Object.assign({}, ENTITY, {
      properties: [
        { id: "§:property:blog.example" },
        { id: "§:property:blog.example" },
        { id: "§:PROPERTY:BLOG.EXAMPLE" },
        { id: "§:property:gone.example" },
      ],
    });
    const { fetch } = fakeFetch(Object.assign({}, SITE, { "https://alice.example/ident.json": listed }));
    const resolver = createResolverCore({ fetch });
    answered(await resolver.resolveEntity("alice.example"));
    const found = await cachedFacts({ resolveEntityStaged: resolver.resolveEntityStaged, store: noStore }, "alice.example", SETTINGS);
    expect(found?.claims).toEqual({ verified: 1, total: 2 });
    expect(
      previewAlt("Alice (alice.example)", "accepted", "accepted", {
        verified: found?.claims.verified ?? -1,
        total: found?.claims.total ?? -1,
      }),
    ).toBe("Alice (alice.example): 1 of 2 claims verified");
  });

  it("a stale document is answered without starting its refresh (a page's peek would start one)", async () => {
    let t = 0;
    const { fetch, calls } = fakeFetch(SITE);
    const resolver = createResolverCore({ fetch, now: () => t });
    answered(await resolver.resolveEntity("alice.example"));
    t = 2 * 3600_000;
    const before = calls.length;
    const found = await cachedFacts({ resolveEntityStaged: resolver.resolveEntityStaged, store: noStore }, "alice.example", SETTINGS);
    await new Promise((r) => setTimeout(r, 20));
    expect(found?.claims).toEqual({ verified: 1, total: 2 });
    expect(calls.length).toBe(before);
  });

  it("a claim whose document is not cached leaves the count unknown", async () => {
    const { fetch } = fakeFetch(Object.assign({}, SITE, { "https://shop.example/ident-property.json": undefined }));
    let t = 0;
    const resolver = createResolverCore({ fetch, now: () => t });
    answered(await resolver.resolveEntity("alice.example"));
    // The failures (404s) are kept 5 minutes, the documents found a day: past 5 minutes only the entity is there.
    t = 10 * 60_000;
    const found = await cachedFacts({ resolveEntityStaged: resolver.resolveEntityStaged, store: noStore }, "alice.example", SETTINGS);
    expect(found?.claims).toEqual({ verified: null, total: 2 });
    expect(found?.name).toBe("Alice \u202Eevil\u202C Example");
  });

  it("verdicts are annotated as the index will annotate them, so the count is the page's", async () => {
    const { fetch } = fakeFetch(SITE);
    const resolver = createResolverCore({ fetch });
    answered(await resolver.resolveEntity("alice.example"));
    const preview = vi.fn(async () => (_kind: string, claim: Claim) => Object.assign({}, claim, { verified: true }));
    const found = await cachedFacts(
      { resolveEntityStaged: resolver.resolveEntityStaged, store: Promise.resolve({ preview }) },
      "alice.example",
      SETTINGS,
    );
    expect(found?.claims).toEqual({ verified: 2, total: 2 });
    expect(preview).toHaveBeenCalledWith("alice.example", expect.any(String));
  });

  it("a failure other than a document not cached is told, and answers null", async () => {
    const warn = vi.fn();
    const source = { resolveEntityStaged: () => Promise.reject(new Error("broken")), store: noStore };
    expect(await cachedFacts(source, "alice.example", SETTINGS, warn)).toBeNull();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("broken"));
  });
});
