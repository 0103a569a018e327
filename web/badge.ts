/**
 * An entity's badge (docs/api.md#badges, docs/decisions.md#badges): a small SVG in shields.io's style,
 * drawn by badge-maker (shields' own library, which measures its text) from what the index last
 * recorded of the entity, never fetching. Kept a minute in memory, answered by the server without
 * Next through `send` with an ETag (If-None-Match answers 304), CORS and a cache life of minutes.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { LRUCache } from "lru-cache";
import type { Logger } from "ident-resolver/setup";
import type { Store } from "ident-resolver/store";
import { entityStanding, type Standing } from "ident-resolver/store";
import { BADGE_TYPE, badgeFacts, drawBadge, type BadgeFacts } from "./badge-drawing";
import { CORS_HEADERS, etagOf, notModified } from "./api-headers";
import { MEMORY_CAPS } from "./memory-caps";
import { unavailableAnswer, type Unavailable as UnavailableWhy } from "./refusal-answer";
import { send, sendText } from "./response";
import type { Route } from "./routes";

/** Where an entity's badge is served. */
export const entityBadgePath = (domain: string) => `/entity/${domain}/badge.svg`;

/** `max-age` of a badge of an entity the index knows, and of the unknown badge (soon known, once looked up). */
export const BADGE_MAX_AGE_S = 300;
export const UNKNOWN_MAX_AGE_S = 60;
/** How long a drawn badge is answered from memory. */
export const BADGE_MEMORY_S = 60;
/** A badge drawn: its bytes and tag, its size in pixels, how long others may keep it, and what it says. */
export type Drawn = { bytes: Buffer; etag: string; width: number; height: number; maxAgeS: number; facts: BadgeFacts };

function drawn(domain: string, standing: Standing | null): Drawn {
  const facts = badgeFacts(domain, standing);
  const svg = drawBadge(facts);
  const size = /^<svg [^>]*?width="(\d+)" height="(\d+)"/.exec(svg);
  // Its own allocation, never a slice of Node's shared pool: the cache counts what it holds (docs/decisions.md#memory).
  const bytes = Buffer.alloc(Buffer.byteLength(svg));
  bytes.write(svg);
  return {
    bytes,
    etag: etagOf(bytes),
    width: Number(size?.[1] ?? 0),
    height: Number(size?.[2] ?? 0),
    maxAgeS: facts.state === "unknown" ? UNKNOWN_MAX_AGE_S : BADGE_MAX_AGE_S,
    facts,
  };
}

/** Why there is no badge now: the server has no index, or it could not be read. */
type Unavailable = { unavailable: UnavailableWhy };
const NO_INDEX: Unavailable = { unavailable: "no index" };
const UNREADABLE: Unavailable = { unavailable: "unreadable" };

export type BadgeDeps = { store: Promise<Store | null>; log: Pick<Logger, "warn" | "error"> };

export type Badges = {
  /** Answers a request the server classified as a badge (web/routes.ts). */
  serve(req: IncomingMessage, res: ServerResponse, route: Route): void;
  /**
   * The badge of `domain` read from the index now, not from memory, and kept for those who ask next
   * (the entity page's Share section, rendered once its own check is recorded); null when unavailable.
   */
  current(domain: string): Promise<Drawn | null>;
};

/** What the badges keep: those drawn lately, and the reads running now (those asking meanwhile join them). */
type Kept = { deps: BadgeDeps; kept: LRUCache<string, Drawn>; running: Map<string, Promise<Drawn | Unavailable>> };

export function createBadges(deps: BadgeDeps): Badges {
  const b: Kept = {
    deps,
    /** docs/architecture.md#memory-caps: `badges`. */
    kept: new LRUCache<string, Drawn>({
      maxSize: MEMORY_CAPS.badges.cap,
      sizeCalculation: (d) => d.bytes.buffer.byteLength + 512,
      ttl: BADGE_MEMORY_S * 1000,
    }),
    running: new Map(),
  };
  return {
    serve(req, res, route) {
      if (route.target.kind !== "badge") throw new Error(`badge: ${route.path} is not a badge`);
      answer(b, req, res, route.target.domain).catch((err: unknown) => {
        deps.log.error(`badge: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        if (!res.headersSent) sendText(req, res, 500, "This resolver could not draw the badge; try again shortly.");
        else res.destroy();
      });
    },
    async current(domain) {
      const found = await read(b, domain);
      return "unavailable" in found ? null : found;
    },
  };
}

/** The badge of `domain` read from the index now, and kept. */
async function read(b: Kept, domain: string): Promise<Drawn | Unavailable> {
  const store = await b.deps.store;
  if (!store) return NO_INDEX;
  try {
    const made = drawn(domain, await entityStanding(store.db, domain));
    b.kept.set(domain, made);
    return made;
  } catch (err) {
    b.deps.log.warn(`store: the badge of ${domain} could not be read: ${err instanceof Error ? err.message : String(err)}`);
    return UNREADABLE;
  }
}

/** The read of `domain` running now, or a new one. */
function joined(b: Kept, domain: string): Promise<Drawn | Unavailable> {
  const now = b.running.get(domain);
  if (now) return now;
  const run = read(b, domain).finally(() => {
    if (b.running.get(domain) === run) b.running.delete(domain);
  });
  b.running.set(domain, run);
  return run;
}

async function answer(b: Kept, req: IncomingMessage, res: ServerResponse, domain: string | null): Promise<void> {
  // docs/decisions.md#badges: a path that is not a domain is no entity's.
  if (domain === null) return sendText(req, res, 404, "There is no badge here: the path does not name a domain.");
  const found = b.kept.get(domain) ?? (await joined(b, domain));
  if ("unavailable" in found) return send(req, res, unavailableAnswer("badge", found.unavailable));
  const headers = Object.assign({}, CORS_HEADERS, {
    "Content-Type": BADGE_TYPE,
    "Cache-Control": `public, max-age=${found.maxAgeS}`,
    ETag: found.etag,
  });
  const header = req.headers["if-none-match"];
  if (notModified(Array.isArray(header) ? header.join(", ") : header, found.etag))
    return send(req, res, { status: 304, headers, body: null });
  send(req, res, { status: 200, headers, body: found.bytes });
}
