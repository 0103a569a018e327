/**
 * Draws a preview card (web/preview-image.ts) as a 1200×630 PNG: satori lays it out and shapes its
 * text with HarfBuzz, resvg paints it off the page thread (docs/decisions.md#preview-images). Fonts
 * and emoji pictures come from packages on disk, read once: Geist (its own npm package) for Latin and
 * Cyrillic, Noto Sans for Greek and nineteen other scripts (Hebrew, Arabic, the Indic ones, Thai, …),
 * and for Chinese, Japanese and Korean only once a card needs them (16 MB more); Twemoji for emoji. Nothing is ever fetched:
 * satori asks for what it lacks and is answered nothing, and the text was first reduced to what these
 * have (web/preview-text.ts, `drawable`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { renderAsync } from "@resvg/resvg-js";
import type { ReactElement } from "react";
import satori from "satori";
import {
  CACHED_MAX_AGE_S,
  COLD_MAX_AGE_S,
  createPreviewCache,
  entityCard,
  PREVIEW_COLORS as C,
  PREVIEW_HEIGHT,
  PREVIEW_WIDTH,
  siteCard,
  SITE_MAX_AGE_S,
  UNSETTLED_MAX_AGE_S,
  type EntityFacts,
  type PreviewCache,
  type PreviewCard,
} from "./preview-image";
import { bridge } from "./bridge";
import { MEMORY_CAPS } from "./memory-caps";
import { fontCoverage, readsRightToLeft, type Glyphs } from "./preview-text";

const MODULES = join(process.cwd(), "node_modules");
/** Geist from its own package (Vercel's, the font files on npm): a supported source, not a path inside Next. */
const LATIN = { name: "Geist", file: "geist/dist/fonts/geist-sans/Geist-Regular.ttf" };
/** A Noto Sans of one script, as @expo-google-fonts packages it. */
const noto = (script: string) => ({
  name: `Noto Sans ${script}`,
  file: `@expo-google-fonts/noto-sans-${script.toLowerCase()}/400Regular/NotoSans${script}_400Regular.ttf`,
});
/**
 * What Geist lacks: Greek and the rest of Latin and Cyrillic; the scripts of the Middle East, South
 * and South-East Asia, the Caucasus and Ethiopia (3.5 MB).
 */
const SCRIPTS = [
  { name: "Noto Sans", file: "@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf" },
  ...["Hebrew", "Arabic", "Armenian", "Georgian", "Ethiopic"].map(noto),
  ...["Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Tamil", "Telugu", "Kannada", "Malayalam", "Sinhala"].map(noto),
  ...["Thai", "Lao", "Khmer", "Myanmar"].map(noto),
];
const IDEOGRAPHS = [
  { name: "Noto Sans SC", file: "@expo-google-fonts/noto-sans-sc/400Regular/NotoSansSC_400Regular.ttf" },
  { name: "Noto Sans KR", file: "@expo-google-fonts/noto-sans-kr/400Regular/NotoSansKR_400Regular.ttf" },
];
/** Twemoji's pictures, one SVG a sequence, named by its code points in hex. */
const EMOJI_DIR = join(MODULES, "@twemoji", "svg");

/** Han, kana and Hangul that show (not a Hangul filler): text that needs the larger set of fonts. */
const IDEOGRAPHIC = /(?!\p{Default_Ignorable_Code_Point})[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

type FontOption = { name: string; data: Buffer; weight: 400; style: "normal" };
type FontSet = { options: FontOption[]; glyphs: Glyphs };

/** Each font file read and its code points listed once, the same Buffer in both sets: satori parses a font once per Buffer. */
const files = new Map<string, { option: FontOption; covered: Set<number> }>();
const read = (font: { name: string; file: string }) => {
  let loaded = files.get(font.file);
  if (!loaded) {
    const data = readFileSync(join(MODULES, font.file));
    files.set(font.file, (loaded = { option: { name: font.name, data, weight: 400, style: "normal" }, covered: fontCoverage(data) }));
  }
  return loaded;
};

let emojiFiles: ReadonlySet<string> | null = null;
/**
 * Twemoji's file of an emoji, or null: its code points in hex, without U+FE0F unless it joins a
 * sequence (Twemoji's naming), and a sequence with it dropped too (a few, such as the eye in a
 * speech bubble, are named without it).
 */
function emojiFile(emoji: string): string | null {
  emojiFiles ??= new Set(readdirSync(EMOJI_DIR).filter((f) => f.endsWith(".svg")));
  const name = (text: string) => `${Array.from(text, (c) => (c.codePointAt(0) ?? 0).toString(16)).join("-")}.svg`;
  const bare = name(emoji.replace(/\ufe0f/g, ""));
  const first = emoji.includes("\u200d") ? name(emoji) : bare;
  return emojiFiles.has(first) ? first : emojiFiles.has(bare) ? bare : null;
}
const hasPicture = (emoji: string): boolean => emojiFile(emoji) !== null;

/** The two sets, each read once and the same objects each time, so satori parses each font once. */
const sets: { small?: FontSet; wide?: FontSet } = {};
function fontSet(wide: boolean): FontSet {
  const key = wide ? "wide" : "small";
  const loaded = sets[key];
  if (loaded) return loaded;
  const fonts = [LATIN, ...SCRIPTS, ...(wide ? IDEOGRAPHS : [])].map(read);
  const covered = new Set<number>();
  for (const font of fonts) for (const c of font.covered) covered.add(c);
  return (sets[key] = { options: fonts.map((f) => f.option), glyphs: { covered, picture: hasPicture } });
}

/** What can be drawn of `text`: with the fonts of ideographs only when it has some. */
export const glyphsFor = (text: string): Glyphs => fontSet(IDEOGRAPHIC.test(text)).glyphs;

/** The fonts of a card: those its text was made drawable with. */
const fontsOf = (card: PreviewCard): FontOption[] =>
  fontSet(card.kind === "entity" && IDEOGRAPHIC.test(`${card.heading} ${card.domain ?? ""}`)).options;

/** What satori asks for when its fonts lack a glyph: an emoji's picture from disk; nothing else, ever. */
async function additionalAsset(code: string, segment: string): Promise<string | never[]> {
  const file = code === "emoji" ? emojiFile(segment) : null;
  if (file === null) return [];
  const svg = await readFile(join(EMOJI_DIR, file));
  return `data:image/svg+xml;base64,${svg.toString("base64")}`;
}

/** Two linked rings on the accent blue: the site's icon (scripts/make-icons.mts), `size` pixels square. */
function Logo({ size }: { size: number }) {
  const r = 0.2 * size;
  const stroke = 0.075 * size;
  const ring = (cx: number) => (
    <div
      style={{
        position: "absolute",
        left: cx * size - r - stroke / 2,
        top: 0.5 * size - r - stroke / 2,
        width: 2 * r + stroke,
        height: 2 * r + stroke,
        borderRadius: "50%",
        border: `${stroke}px solid ${C.bg}`,
      }}
    />
  );
  return (
    <div style={{ position: "relative", display: "flex", width: size, height: size, borderRadius: 0.2 * size, backgroundColor: C.accent }}>
      {ring(0.38)}
      {ring(0.62)}
    </div>
  );
}

/** "ident resolver" as the site's header writes it: "ident" in the text colour, "resolver" in the accent. */
function Brand({ size }: { size: number }) {
  return (
    <div style={{ display: "flex", alignItems: "center", fontSize: size }}>
      <Logo size={Math.round(size * 1.5)} />
      <div style={{ display: "flex", marginLeft: Math.round(size * 0.5), color: C.fg }}>ident</div>
      <div style={{ display: "flex", marginLeft: Math.round(size * 0.25), color: C.accent }}>resolver</div>
    </div>
  );
}

const PAGE = {
  width: PREVIEW_WIDTH,
  height: PREVIEW_HEIGHT,
  display: "flex",
  flexDirection: "column",
  justifyContent: "space-between",
  padding: "64px 72px",
  // satori's layout (0.63) sizes a box without its padding unless told.
  boxSizing: "border-box",
  backgroundColor: C.bg,
  color: C.fg,
  fontFamily: LATIN.name,
} as const;

/**
 * A block of text on at most `lines` lines, cut with an ellipsis, never wider than its column. satori
 * breaks the lines, then orders each by the Unicode bidirectional algorithm in the paragraph's
 * direction, given here: right to left, and against the right margin, when the first letter is
 * Hebrew or Arabic.
 */
function Lines({
  text,
  size,
  lines,
  color,
  marginTop = 0,
}: {
  text: string;
  size: number;
  lines: number;
  color: string;
  marginTop?: number;
}) {
  const lineHeight = 1.2;
  const rtl = readsRightToLeft(text);
  return (
    <div
      style={{
        display: "block",
        direction: rtl ? "rtl" : "ltr",
        textAlign: rtl ? "right" : "left",
        marginTop,
        fontSize: size,
        lineHeight,
        color,
        lineClamp: lines,
        maxHeight: Math.ceil(lines * size * lineHeight),
        overflow: "hidden",
        wordBreak: "break-word",
      }}
    >
      {text}
    </div>
  );
}

/** The image of a card, as satori takes it. */
export function cardElement(card: PreviewCard): ReactElement {
  if (card.kind === "site") {
    return (
      <div style={PAGE}>
        <div style={{ display: "flex" }} />
        <div style={{ display: "flex", flexDirection: "column" }}>
          <Brand size={72} />
          <Lines text={card.tagline} size={40} lines={3} color={C.muted} marginTop={40} />
        </div>
        <div style={{ display: "flex", height: 4, backgroundColor: C.line }} />
      </div>
    );
  }
  return (
    <div style={PAGE}>
      <Brand size={32} />
      <div style={{ display: "flex", flexDirection: "column" }}>
        <Lines text={card.heading} size={card.headingSize} lines={card.headingLines} color={C.fg} />
        {card.domain === null ? null : <Lines text={card.domain} size={40} lines={1} color={C.muted} marginTop={16} />}
      </div>
      <div style={{ display: "flex", alignItems: "center", paddingTop: 28, borderTop: `3px solid ${C.line}` }}>
        <div style={{ display: "flex", width: 22, height: 22, borderRadius: 11, backgroundColor: card.allVerified ? C.accent : C.muted }} />
        <div style={{ display: "flex", flexGrow: 1, flexShrink: 1, marginLeft: 20, minWidth: 0 }}>
          <Lines text={card.claims} size={38} lines={1} color={card.allVerified ? C.accent : C.fg} />
        </div>
      </div>
    </div>
  );
}

/**
 * The PNG of a card, drawn now: laid out on this thread (about 20 ms once the fonts are parsed; the
 * first drawing, and the first with ideographs, several hundred), painted on libuv's threads
 * (docs/decisions.md#preview-images). The picture is all paths: resvg needs no font of its own.
 */
export async function renderCard(card: PreviewCard): Promise<Buffer> {
  const svg = await satori(cardElement(card), {
    width: PREVIEW_WIDTH,
    height: PREVIEW_HEIGHT,
    fonts: fontsOf(card),
    loadAdditionalAsset: additionalAsset,
  });
  const image = await renderAsync(svg, { fitTo: { mode: "width", value: PREVIEW_WIDTH }, font: { loadSystemFonts: false } });
  return image.asPng();
}

/** One cache per process, on the bridge as the app is (web/bridge.ts): each route's bundle finds the same one. */
function previews(): PreviewCache {
  const held = bridge();
  held.previews ??= createPreviewCache({ maxBytes: MEMORY_CAPS.previews.cap, render: renderCard });
  return held.previews;
}

/** The site's own image, for every page but an entity's. */
export async function sitePreview(maxAgeS = SITE_MAX_AGE_S): Promise<{ png: Buffer; maxAgeS: number }> {
  const png = await previews().png(siteCard());
  if (!png) throw new Error("the site's image is always drawn");
  return { png, maxAgeS };
}

/**
 * An entity's image from its cached facts, public for an hour once accepted with every claim settled,
 * five minutes otherwise; the site's image, for a minute, when nothing is cached (or, told to `warn`,
 * when the entity's could not be drawn).
 */
export async function entityPreview(facts: EntityFacts | null, warn?: (line: string) => void): Promise<{ png: Buffer; maxAgeS: number }> {
  if (facts === null) return sitePreview(COLD_MAX_AGE_S);
  try {
    const settled = facts.status === "accepted" && facts.claims.verified !== null;
    const png = await previews().png(entityCard(facts, glyphsFor(`${facts.name ?? ""} ${facts.domain}`)));
    // Drawings busy: the site's image for now, briefly cacheable.
    if (png === null) return sitePreview(COLD_MAX_AGE_S);
    return { png, maxAgeS: settled ? CACHED_MAX_AGE_S : UNSETTLED_MAX_AGE_S };
  } catch (err) {
    warn?.(`preview image of ${facts.domain} not drawn: ${err instanceof Error ? err.message : String(err)}`);
    return sitePreview(COLD_MAX_AGE_S);
  }
}
