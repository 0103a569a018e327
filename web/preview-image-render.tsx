/**
 * Draws a preview card (web/preview-image.ts) as a 1200×630 PNG with next/og (satori, then resvg or
 * sharp), with the one font Next ships, read from disk once (docs/decisions.md#crawlers). Every text
 * drawn was first reduced to what that font has (`drawable`), so next/og never looks for another font
 * or an emoji picture: it would fetch them from Google Fonts and a CDN.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ImageResponse } from "next/og";
import type { ReactElement } from "react";
import {
  CACHED_MAX_AGE_S,
  COLD_MAX_AGE_S,
  createPreviewCache,
  entityCard,
  fontCoverage,
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

/** Geist Regular, as next/og itself uses it; every Next install has it. */
const FONT_FILE = join("node_modules", "next", "dist", "compiled", "@vercel", "og", "Geist-Regular.ttf");
const FONT_NAME = "Geist";

type Font = { data: Buffer; covered: ReadonlySet<number>; options: { name: string; data: Buffer; weight: 400; style: "normal" }[] };
let font: Font | null = null;

/** The font, read once; the same objects each time, so satori parses it once too. */
export function previewFont(): Font {
  if (font) return font;
  const data = readFileSync(join(process.cwd(), FONT_FILE));
  font = { data, covered: fontCoverage(data), options: [{ name: FONT_NAME, data, weight: 400, style: "normal" }] };
  return font;
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
  backgroundColor: C.bg,
  color: C.fg,
  fontFamily: FONT_NAME,
} as const;

/** A block of text on at most `lines` lines, cut with an ellipsis, never wider than its column. */
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
  return (
    <div
      style={{
        display: "block",
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

/** The PNG of a card, drawn now: about 40 ms, the first half a second (docs/decisions.md#crawlers). */
export async function renderCard(card: PreviewCard): Promise<Buffer> {
  const response = new ImageResponse(cardElement(card), { width: PREVIEW_WIDTH, height: PREVIEW_HEIGHT, fonts: previewFont().options });
  return Buffer.from(await response.arrayBuffer());
}

/** Bytes of rendered PNGs kept: an entity's is 25 to 65 KB, so a few hundred (docs/decisions.md#crawlers). */
export const PREVIEW_CACHE_BYTES = 8 * 1024 * 1024;

/** One cache per process, on `globalThis` as the app is (web/app.ts): each route's bundle finds the same one. */
const holder = globalThis as typeof globalThis & { __identPreviews?: PreviewCache };
function previews(): PreviewCache {
  holder.__identPreviews ??= createPreviewCache({ maxBytes: PREVIEW_CACHE_BYTES, render: renderCard });
  return holder.__identPreviews;
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
    const png = await previews().png(entityCard(facts, previewFont().covered));
    // Drawings busy: the site's image for now, briefly cacheable.
    if (png === null) return sitePreview(COLD_MAX_AGE_S);
    return { png, maxAgeS: settled ? CACHED_MAX_AGE_S : UNSETTLED_MAX_AGE_S };
  } catch (err) {
    warn?.(`preview image of ${facts.domain} not drawn: ${err instanceof Error ? err.message : String(err)}`);
    return sitePreview(COLD_MAX_AGE_S);
  }
}
