/**
 * Preview images for shared links (docs/decisions.md#crawlers): what an entity's 1200×630 PNG shows,
 * worked out from what the resolver already has cached, its text made drawable (web/preview-text.ts),
 * and the rendered PNGs kept in a small LRU bounded by bytes. Framework-free: the drawing itself is
 * web/preview-image-render.tsx (satori and resvg), the routes under `app/` are thin.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { Settings } from "ident-resolver/present";
import { entityView } from "ident-resolver/present";
import { newWork, type Resolver } from "ident-resolver";
import { NotCached } from "ident-resolver";
import type { Claim, EntityResult, EntityStatus } from "ident-resolver";
import type { Store } from "ident-resolver/store";
import { claimCounts, listedOnce } from "ident-resolver";
import { isRefusal } from "ident-resolver/traffic";
import { clipGraphemes, drawable, textWidth, type Glyphs } from "./preview-text";

export const PREVIEW_WIDTH = 1200;
export const PREVIEW_HEIGHT = 630;
export const SITE_NAME = "ident resolver";
export const SITE_TAGLINE = "Look up who publishes a domain, and which of their sites and credentials verify both ways.";

/** The light scheme of app/globals.css (`--bg`, `--fg`, `--muted`, `--accent`, `--line`). */
export const PREVIEW_COLORS = { bg: "#ffffff", fg: "#1b1f24", muted: "#555d66", accent: "#0b57d0", line: "#d5dae0" } as const;

/**
 * `max-age` of an accepted entity's image drawn from cached data; of one whose document failed or whose
 * claims are not all cached (a failure is cached 5 minutes, docs/decisions.md#caching); of the site's
 * image answered while nothing is cached; and of the site's own image.
 */
export const CACHED_MAX_AGE_S = 3600;
export const UNSETTLED_MAX_AGE_S = 300;
export const COLD_MAX_AGE_S = 60;
export const SITE_MAX_AGE_S = 86_400;

/** What an entity's image says, before it is made drawable. */
export type EntityFacts = {
  domain: string;
  /** The entity's own name when it is accepted and names itself; null otherwise (the domain is the heading). */
  name: string | null;
  status: EntityStatus;
  statusText: string;
  /** Claims listed, and how many verified; `verified` is null when not every claim's document is cached. */
  claims: { verified: number | null; total: number };
};

/** "3 of 4 claims verified", in the words of the image and of its alt text. */
export function claimWords(facts: Pick<EntityFacts, "status" | "statusText" | "claims">): string {
  if (facts.status !== "accepted") return capitalised(facts.statusText);
  const { verified, total } = facts.claims;
  const noun = total === 1 ? "claim" : "claims";
  if (total === 0) return "No claims listed";
  if (verified === null) return `${total} ${noun} listed`;
  return `${verified} of ${total} ${noun} verified`;
}

/**
 * The alt text of an entity's image, after the page's title ("Alice (alice.example)"): with the
 * claims' count when it is known ("…: 3 of 4 claims verified"), with the status when not accepted.
 */
export function previewAlt(
  title: string,
  status: EntityStatus,
  statusText: string,
  counts: { verified: number; total: number } | null,
): string {
  if (status === "accepted" && counts === null) return title;
  return `${title}: ${claimWords({ status, statusText, claims: counts ?? { verified: null, total: 0 } })}`;
}

/** Where an entity's image is served, and the site's. */
export const entityPreviewPath = (domain: string) => `/entity/${domain}/preview.png`;
export const SITE_PREVIEW_PATH = "/preview.png";

/** An image as `openGraph.images` and `twitter.images` take it: absolute under the public origin, with its size. */
export function previewImage(path: string, publicUrl: string, alt: string) {
  return { url: new URL(path, publicUrl).href, width: PREVIEW_WIDTH, height: PREVIEW_HEIGHT, alt };
}

/** The site's image, for every page that names no image of its own (the root layout's metadata). */
export function siteImageMetadata(publicUrl: string) {
  const image = previewImage(SITE_PREVIEW_PATH, publicUrl, `${SITE_NAME}: ${SITE_TAGLINE}`);
  return {
    openGraph: { siteName: SITE_NAME, type: "website" as const, images: [image] },
    twitter: { card: "summary_large_image" as const, images: [image] },
  };
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The facts of an entity, from a result or the entity alone (its claims' count without their verdicts). */
export function entityFacts(
  entity: EntityResult["entity"],
  cache: EntityResult["cache"],
  claims: EntityFacts["claims"],
  settings: Settings,
): EntityFacts {
  const view = entityView(entity, cache, settings);
  const named = view.status === "accepted" && typeof entity.details?.name === "string" && entity.details.name.trim() !== "";
  return { domain: view.domain, name: named ? view.name : null, status: view.status, statusText: view.statusText, claims };
}

/** What the image route reads: entity documents from the cache, and the index's verdicts. */
export type PreviewSource = Pick<Resolver, "resolveEntityStaged"> & {
  store: Promise<Pick<Store, "preview"> | null>;
};

/**
 * The facts of `domain` from the resolver's cache alone, or null when its document is not cached.
 * Nothing is fetched (docs/decisions.md#crawlers): a cache-only read with a budget already spent, so
 * not even a stale document's background refresh can start. A claim whose document is not cached
 * leaves the verified count unknown. Verdicts are annotated as the index will annotate them (stale on
 * error), so the count is the page's. `warn` is told of a read that failed otherwise than for a
 * document not cached.
 */
export async function cachedFacts(
  source: PreviewSource,
  domain: string,
  settings: Settings,
  warn?: (line: string) => void,
): Promise<EntityFacts | null> {
  const work = newWork();
  work.fetches = Number.MAX_SAFE_INTEGER;
  // A cache-only read fails for a document not cached. The resolver may come from another bundle's copy
  // of its module (web/app.ts), so its NotCached is known by its message too; anything else is told,
  // and the image is the site's all the same.
  const notCached = (err: unknown) => {
    const notCached = err instanceof NotCached || (err instanceof Error && err.message.endsWith(" is not cached"));
    if (!notCached) warn?.(`preview image of ${domain}: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  };
  const staged = await source.resolveEntityStaged(domain, { cacheOnly: true, work }).catch(notCached);
  if (staged === null || isRefusal(staged)) return null;
  const whole = await staged.result.catch(notCached);
  // docs/decisions.md#counting-claims: each claim once, as the badge and the index count them.
  const total = listedOnce(staged).length;
  if (whole === null) return entityFacts(staged.entity, staged.cache, { verified: null, total }, settings);
  const store = whole.entity.status === "accepted" ? await source.store : null;
  const annotate = store ? await store.preview(whole.entity.domain, whole.cache.fetched_at) : null;
  const as = (kind: "properties" | "credentials" | "connections"): Claim[] =>
    annotate ? whole[kind].map((claim, i) => annotate(kind, claim, i)) : whole[kind];
  const counts = claimCounts({ properties: as("properties"), credentials: as("credentials"), connections: as("connections") });
  return entityFacts(whole.entity, whole.cache, counts, settings);
}

// ---------------------------------------------------------------------------------------------
// Layout decisions: everything the drawing needs, decided here, so the digest of a card is the digest
// of what the image shows.

export type PreviewCard =
  | { kind: "site"; title: string; tagline: string }
  | {
      kind: "entity";
      /** The name, or the domain when there is no drawable name. */
      heading: string;
      headingSize: number;
      headingLines: number;
      /** The domain under a name; null when the domain is the heading. */
      domain: string | null;
      claims: string;
      /** Whether every claim listed verifies (the count in the accent colour, else muted). */
      allVerified: boolean;
    };

/** Longest heading drawn, in graphemes: three lines at the smallest size. */
export const MAX_HEADING = 90;
/** Font sizes by heading width ({@link textWidth}): short names big, long ones on up to three lines (Geist: about 0.55 em a letter). */
const SIZES: { upTo: number; size: number; lines: number }[] = [
  { upTo: 22, size: 80, lines: 1 },
  { upTo: 44, size: 68, lines: 2 },
  { upTo: 60, size: 56, lines: 2 },
  { upTo: MAX_HEADING, size: 48, lines: 3 },
];

export function siteCard(): PreviewCard {
  return { kind: "site", title: SITE_NAME, tagline: SITE_TAGLINE };
}

/** The card of an entity: its name (or domain), domain and claims, as much of them as `glyphs` can draw. */
export function entityCard(facts: EntityFacts, glyphs: Glyphs): PreviewCard {
  const name = facts.name === null ? "" : clipGraphemes(drawable(facts.name, glyphs), MAX_HEADING);
  const domain = clipGraphemes(drawable(facts.domain, glyphs), MAX_HEADING);
  const heading = name === "" ? domain : name;
  const length = textWidth(heading);
  const fit = SIZES.find((s) => length <= s.upTo) ?? SIZES[SIZES.length - 1] ?? { size: 48, lines: 3 };
  const { verified, total } = facts.claims;
  return {
    kind: "entity",
    heading,
    headingSize: fit.size,
    headingLines: fit.lines,
    domain: name === "" ? null : domain,
    claims: drawable(claimWords(facts), glyphs),
    allVerified: facts.status === "accepted" && total > 0 && verified === total,
  };
}

/** Changed whenever the drawing changes, so no image drawn before is served for a card drawn now. */
const DRAWING_VERSION = 2;

/** The key of a card's PNG: the domain (or `site`) and a digest of everything the image shows. */
export function cardKey(card: PreviewCard): string {
  const digest = createHash("sha256")
    .update(JSON.stringify([DRAWING_VERSION, PREVIEW_COLORS, card]))
    .digest("base64url")
    .slice(0, 22);
  return `${card.kind === "entity" ? (card.domain ?? card.heading) : "site"} ${digest}`;
}

// ---------------------------------------------------------------------------------------------

export type PreviewCache = {
  /**
   * The PNG of `card`: drawn once, then the same Buffer while it stays in the cache. Null when it is
   * not kept and `maxDrawing` drawings run already: a drawing holds the page thread for tens of ms,
   * so strangers cycling through many entities cannot keep it busy (docs/decisions.md#crawlers).
   */
  png(card: PreviewCard): Promise<Buffer | null>;
  /** Bytes held (whole Buffer sizes). */
  readonly bytes: number;
  readonly size: number;
};

/** Rendered PNGs by {@link cardKey}, least recently used first out; concurrent requests for one card share one drawing. */
export function createPreviewCache(options: {
  maxBytes: number;
  render: (card: PreviewCard) => Promise<Buffer>;
  /** Drawings at once; past it, `png` answers null. @default 2 */
  maxDrawing?: number;
}): PreviewCache {
  const lru = new LRUCache<string, Buffer>({ maxSize: options.maxBytes, sizeCalculation: (png) => Math.max(1, png.byteLength) });
  const drawing = new Map<string, Promise<Buffer>>();
  const maxDrawing = options.maxDrawing ?? 2;
  return {
    png(card) {
      const key = cardKey(card);
      const cached = lru.get(key);
      if (cached) return Promise.resolve(cached);
      const running = drawing.get(key);
      if (running) return running;
      // The site's one image is always drawn (once); entities' wait for a free drawing.
      if (card.kind === "entity" && drawing.size >= maxDrawing) return Promise.resolve(null);
      const drawn = options
        .render(card)
        .then((png) => {
          lru.set(key, png);
          return png;
        })
        .finally(() => drawing.delete(key));
      drawing.set(key, drawn);
      return drawn;
    },
    get bytes() {
      return lru.calculatedSize;
    },
    get size() {
      return lru.size;
    },
  };
}

/** The PNG as an HTTP answer, public for `maxAgeS`. */
export function pngResponse(png: Buffer, maxAgeS: number): Response {
  return new Response(new Uint8Array(png), {
    headers: {
      "Content-Type": "image/png",
      "Content-Length": String(png.byteLength),
      "Cache-Control": `public, max-age=${maxAgeS}`,
    },
  });
}
