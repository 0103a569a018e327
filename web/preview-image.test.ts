import { PNG } from "pngjs";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { FetchMode, FetchOutcome } from "../lib/fetch/fetcher";
import { createResolver } from "../lib/resolver";
import type { Claim } from "../lib/result/record";
import type { FetchRefusal } from "../lib/traffic/refusal";
import { answered } from "../test/helpers/answered";
import {
  cachedFacts,
  cardKey,
  claimWords,
  COLD_MAX_AGE_S,
  createPreviewCache,
  drawable,
  entityCard,
  fontCoverage,
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
import { entityPreview, previewFont, renderCard, sitePreview } from "./preview-image-render";

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
  ["CJK and other scripts", "株式会社サンプル 예시 ตัวอย่าง देवनागरी"],
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
    // The first drawing starts next/og's layout engine, whose WebAssembly is inlined as a data: URL
    // that it asks `fetch` for (and decodes itself when that fails): no network. Nothing else, ever.
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
      const card = entityCard(facts(name), previewFont().covered);
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

  it("the guard is needed: text the font lacks, drawn as it is, makes next/og fetch from a third party", async () => {
    const urls: string[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn((url: unknown) => {
        urls.push(String(url));
        return Promise.reject(new Error("refused"));
      }),
    );
    const raw: PreviewCard = {
      kind: "entity",
      heading: "Rocket 🚀",
      headingSize: 80,
      headingLines: 1,
      domain: null,
      claims: "",
      allVerified: false,
    };
    await expect(renderCard(raw)).rejects.toThrow("refused");
    expect(urls.some((url) => url.startsWith("https://"))).toBe(true);
  });

  it("every text drawn is made only of code points the bundled font has", () => {
    const covered = previewFont().covered;
    for (const [, name] of HOSTILE) {
      const card = entityCard(facts(name), covered);
      if (card.kind !== "entity") throw new Error("an entity card");
      for (const text of [card.heading, card.domain ?? "", card.claims]) {
        for (const p of text)
          expect(covered.has(p.codePointAt(0) ?? -1), `U+${p.codePointAt(0)?.toString(16)} in ${JSON.stringify(text)}`).toBe(true);
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
  const covered = previewFont().covered;
  it("keeps what the font has: Latin with its accents, Cyrillic, punctuation", () => {
    expect(drawable("Ça va, Zoë — Ёжик № 5…", covered)).toBe("Ça va, Zoë — Ёжик № 5…");
    // Decomposed accents are composed first, so they survive.
    expect(drawable("Zoe\u0308", covered)).toBe("Zoë");
  });
  it("drops bidi controls, right-to-left letters, emoji, flags and stray marks; white space becomes one space", () => {
    expect(drawable("\u202Eevil\u202C", covered)).toBe("evil");
    expect(drawable("Acme שלום مرحبا Labs", covered)).toBe("Acme Labs");
    expect(drawable("A 🚀 👨‍👩‍👧 🇫🇷 B", covered)).toBe("A B");
    expect(drawable("x\u0336\u0337\u0338y", covered)).toBe("xy");
    expect(drawable(" a\t\n\u00a0 b ", covered)).toBe("a b");
    // What is left of the marks is at most one composed into each letter (a + U+0328 is ą).
    const letters = drawable(zalgo, covered);
    expect(Array.from(letters)).toHaveLength(5);
    expect(letters.normalize("NFD").replace(/\p{M}/gu, "")).toBe("Zalgo");
  });
  it("reads the cmap of the font: Geist has Latin and Cyrillic, no Hebrew, Arabic or emoji", () => {
    const covered2 = fontCoverage(previewFont().data);
    expect(covered2.has(0x41)).toBe(true);
    expect(covered2.has(0x416)).toBe(true);
    expect(covered2.has(0x5d0)).toBe(false);
    expect(covered2.has(0x627)).toBe(false);
    expect(covered2.has(0x1f680)).toBe(false);
  });
});

describe("the card of an entity", () => {
  const covered = previewFont().covered;
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
    for (const name of [null, "", "🚀🚀", "\u202Eשלום"])
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
  const card = (n: number): PreviewCard => entityCard(facts(`Entity ${n}`), previewFont().covered);

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
    expect(cardKey(entityCard(facts("Entity 1", { verified: 4, total: 4 }), previewFont().covered))).not.toBe(cardKey(card(1)));
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
    const resolver = createResolver({ fetch });
    expect(await cachedFacts({ resolveEntityStaged: resolver.resolveEntityStaged, store: noStore }, "alice.example", SETTINGS)).toBeNull();
    expect(calls).toEqual([]);
  });

  it("once looked up: the name and the count of verified claims, without a fetch", async () => {
    const { fetch, calls } = fakeFetch(SITE);
    const resolver = createResolver({ fetch });
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
    const card = entityCard(found!, previewFont().covered);
    expect(card).toMatchObject({ heading: "Alice evil Example", claims: "1 of 2 claims verified" });
  });

  it("a stale document is answered without starting its refresh (a page's peek would start one)", async () => {
    let t = 0;
    const { fetch, calls } = fakeFetch(SITE);
    const resolver = createResolver({ fetch, now: () => t });
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
    const resolver = createResolver({ fetch, now: () => t });
    answered(await resolver.resolveEntity("alice.example"));
    // The failures (404s) are kept 5 minutes, the documents found a day: past 5 minutes only the entity is there.
    t = 10 * 60_000;
    const found = await cachedFacts({ resolveEntityStaged: resolver.resolveEntityStaged, store: noStore }, "alice.example", SETTINGS);
    expect(found?.claims).toEqual({ verified: null, total: 2 });
    expect(found?.name).toBe("Alice \u202Eevil\u202C Example");
  });

  it("verdicts are annotated as the index will annotate them, so the count is the page's", async () => {
    const { fetch } = fakeFetch(SITE);
    const resolver = createResolver({ fetch });
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
