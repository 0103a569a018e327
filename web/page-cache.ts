/**
 * Whole rendered pages, kept while what they show is unchanged (docs/decisions.md#page-cache). A page is stored under its URL with a version: the resolver's answer for it,
 * as text. A request is served from the store only when the version it would render now is the same,
 * so a stored page is byte for byte what a fresh render gives, except for the CSP nonce: every copy
 * sent gets a fresh one, in the header and everywhere in the body (docs/decisions.md#security-headers).
 * Framework-free: it wraps any Node request handler (web/serve.js hands it Next's).
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { constants, crc32, deflateRawSync, gzipSync } from "node:zlib";
import { LRUCache } from "lru-cache";
import { FAULT_MARKS } from "./failed-parts";
import { MEMORY_CAPS } from "./memory-caps";
import { RSC_QUERY, RSC_REQUEST_HEADERS } from "./framework";
import { acceptsGzip, intercept, send } from "./response";
import type { Route } from "./routes";
import { createVersions, type Version } from "./versions";

type Stored = {
  version: string;
  status: number;
  headers: OutgoingHttpHeaders;
  nonce: string;
  parts: Buffer[];
  /** Each part compressed on its own, once, for `gzipWithNonce`. */
  deflated: Buffer[];
  bytes: number;
};
/** A page to send; `gzipped` when it was compressed already. */
type Rendered = { status: number; headers: OutgoingHttpHeaders; body: Buffer; gzipped?: Buffer };

/** What a page shows, as text, and until when (ms) that text stands unless `generation` moves. */
export type PageVersion = Version;

export type PageCacheOptions = {
  /**
   * What the page of `route` shows, as text, when all of it is known now (every document cached);
   * null when it is not, or when the page must be rendered afresh (a refresh, a page not cached).
   */
  version(route: Route): Promise<PageVersion | string | null>;
  /**
   * A number that moves whenever anything the version of `route` is made from changes. With it, a
   * version with an `until` is worked out once and reused while this reads the same and the clock is
   * before `until` (web/versions.ts).
   */
  generation?(route: Route): number;
  /** Clock, in ms. @default Date.now */
  now?(): number;
  /**
   * Which copy of a page this client gets. Pages are stored per URL and variant, for a renderer whose
   * HTML differs by client (Next places streamed metadata differently for bots). @default one copy
   */
  variant?(req: IncomingMessage): string;
  /** @default MEMORY_CAPS.pages (web/memory-caps.ts) */
  maxBytes?: number;
};

export type PageCache = {
  /**
   * Answers `req` from a stored page when its version is current; else renders it with `render`,
   * storing it when it may. A route the cache never keeps (`route.cacheUrl` null) goes to `render` at once.
   */
  serve(req: IncomingMessage, res: ServerResponse, route: Route, render: () => void): Promise<void>;
  readonly size: number;
  /** The bytes the stored pages' buffers hold in memory, whole allocations counted (what `maxBytes` bounds). */
  readonly heldBytes: number;
};

/**
 * `buffers` copied into one allocation of exactly their bytes, as views of it: a view of a larger
 * buffer (zlib's 16 KiB output chunks, Node's shared 8 KiB pool) would keep all of it alive
 * (docs/deploying.md#staying-up-in-public: a cache counts what it really holds).
 */
export function owned(buffers: readonly Buffer[]): { views: Buffer[]; held: number } {
  const total = buffers.reduce((n, b) => n + b.length, 0);
  const one = Buffer.alloc(total);
  let at = 0;
  const views = buffers.map((b) => {
    b.copy(one, at);
    const view = one.subarray(at, at + b.length);
    at += b.length;
    return view;
  });
  return { views, held: one.buffer.byteLength };
}

const NONCE_RE = /'nonce-([A-Za-z0-9+/]+={0,2})'/;
/** Headers that belong to one response, not to the page. */
const PER_RESPONSE = new Set(["date", "content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"]);
/** What a page that showed a fault holds (web/failed-parts.ts), as bytes. */
const FAULTS = FAULT_MARKS.map((mark) => Buffer.from(mark));

/** `body` cut at every occurrence of `nonce`; joined again with another nonce by `withNonce`. */
export function splitAt(body: Buffer, nonce: string): Buffer[] {
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = body.indexOf(nonce); at !== -1; at = body.indexOf(nonce, from)) {
    parts.push(body.subarray(from, at));
    from = at + nonce.length;
  }
  parts.push(body.subarray(from));
  return parts;
}

export function withNonce(parts: Buffer[], nonce: string): Buffer {
  const n = Buffer.from(nonce);
  return Buffer.concat(parts.flatMap((p, i) => (i === 0 ? [p] : [n, p])));
}

/** Each part as raw deflate blocks that end on a byte boundary with no history: they can be joined. */
export function deflateParts(parts: Buffer[]): Buffer[] {
  return parts.map((p) => deflateRawSync(p, { finishFlush: constants.Z_FULL_FLUSH }));
}

const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** The last, empty block of a deflate stream (a stored block with BFINAL set). */
const LAST_BLOCK = Buffer.from([1, 0, 0, 0xff, 0xff]);

/**
 * The gzip member of `withNonce(parts, nonce)` from parts compressed once (`deflateParts`): each
 * nonce goes between them as a stored block, so a stored page is sent compressed with a fresh nonce
 * for the cost of a checksum instead of compressing the page again (1 ms for a 66 KB page).
 */
export function gzipWithNonce(parts: Buffer[], deflated: Buffer[], nonce: string): Buffer {
  const n = Buffer.from(nonce);
  if (n.length > 0xffff) throw new RangeError("nonce too long for one stored block");
  const stored = Buffer.alloc(5);
  stored.writeUInt16LE(n.length, 1);
  stored.writeUInt16LE(~n.length & 0xffff, 3);
  let crc = 0;
  let size = 0;
  const out: Buffer[] = [GZIP_HEADER];
  if (deflated.length !== parts.length) throw new RangeError("one deflated part for each part");
  deflated.forEach((blocks, i) => {
    if (i > 0) {
      out.push(stored, n);
      crc = crc32(n, crc);
      size += n.length;
    }
    const part = parts[i] ?? Buffer.alloc(0);
    out.push(blocks);
    crc = crc32(part, crc);
    size += part.length;
  });
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(size >>> 0, 4);
  return Buffer.concat([...out, LAST_BLOCK, trailer]);
}

/** Requests that ask about a copy the client holds, or part of one: rendered, never answered from the store. */
const CONDITIONAL = ["if-none-match", "if-modified-since", "range"];

/** Whether this request asks for the page's HTML itself: a GET, not a conditional one, nor one Next answers with its router's payload. */
const asksForPage = (req: IncomingMessage, url: URL) =>
  req.method === "GET" &&
  ![...RSC_REQUEST_HEADERS, ...CONDITIONAL].some((h) => req.headers[h] !== undefined) &&
  !url.searchParams.has(RSC_QUERY);

/** Runs `render` with what it writes kept instead of sent (web/response.ts). */
function capture(res: ServerResponse, render: () => void): Promise<Rendered | null> {
  return new Promise((resolve) => {
    intercept(res, { keep: { ended: resolve } });
    render();
  });
}

/** Response header saying where the page came from: `hit` (the store) or `miss` (rendered now). */
export const CACHE_HEADER = "x-ident-page-cache";

function sendPage(req: IncomingMessage, res: ServerResponse, page: Rendered, gzip: boolean, from: "hit" | "miss") {
  const headers: OutgoingHttpHeaders = { [CACHE_HEADER]: from };
  for (const [name, value] of Object.entries(page.headers))
    if (!PER_RESPONSE.has(name) && name !== CACHE_HEADER && value !== undefined) headers[name] = value;
  const body = gzip ? (page.gzipped ?? gzipSync(page.body)) : page.body;
  if (gzip) headers["content-encoding"] = "gzip";
  // The page's own headers, its policy among them, replace whatever the response held.
  const id = res.getHeader("x-request-id");
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  if (id !== undefined) res.setHeader("x-request-id", id);
  send(req, res, { status: page.status, headers, body });
}

/** A stored page with a fresh nonce in its CSP header and body, compressed when the client takes gzip. */
function withFreshNonce(page: Stored, gzip: boolean): Rendered {
  const nonce = randomBytes(16).toString("base64");
  const headers: OutgoingHttpHeaders = { ...page.headers };
  const csp = headers["content-security-policy"];
  if (typeof csp === "string") headers["content-security-policy"] = csp.split(page.nonce).join(nonce);
  return gzip
    ? { status: page.status, headers, body: Buffer.alloc(0), gzipped: gzipWithNonce(page.parts, page.deflated, nonce) }
    : { status: page.status, headers, body: withNonce(page.parts, nonce) };
}

export function createPageCache(options: PageCacheOptions): PageCache {
  const lru = new LRUCache<string, Stored>({ maxSize: options.maxBytes ?? MEMORY_CAPS.pages.cap, sizeCalculation: (p) => p.bytes + 1024 });
  const now = options.now ?? Date.now;
  /** Versions worked out, by URL: a warm page is answered without resolving it again from the cache. */
  const versions = createVersions<Route>({
    version: (route) => options.version(route),
    ...(options.generation ? { generation: options.generation } : {}),
    now,
  });
  const versionOf = (route: Route, url: URL) => versions(`${url.pathname}${url.search}`, route);

  async function serve(req: IncomingMessage, res: ServerResponse, route: Route, render: () => void): Promise<void> {
    const url = route.cacheUrl;
    if (url === null || !asksForPage(req, route.url)) return render();
    const version = await versionOf(route, url);
    if (version === null) return render();
    const key = `${options.variant?.(req) ?? ""} ${url.pathname}${url.search}`;
    const gzip = acceptsGzip(req.headers["accept-encoding"]);
    const hit = lru.get(key);
    if (hit?.version === version) return sendPage(req, res, withFreshNonce(hit, gzip), gzip, "hit");
    // Rendered uncompressed into memory (the page is known, so it is not streamed), then sent.
    delete req.headers["accept-encoding"];
    const page = await capture(res, render);
    if (!page) return;
    const csp = page.headers["content-security-policy"];
    const nonce = typeof csp === "string" ? NONCE_RE.exec(csp)?.[1] : undefined;
    const type = String(page.headers["content-type"] ?? "");
    // Stored only when nothing changed while it rendered, when it is an HTML page, and when it shows no
    // fault: a fault is of the moment, and would be replayed until the version moves.
    const stored = page.status === 200 && nonce && type.startsWith("text/html") && !FAULTS.some((mark) => page.body.includes(mark));
    if (stored && (await versionOf(route, url)) === version) {
      const parts = owned(splitAt(page.body, nonce));
      const deflated = owned(deflateParts(parts.views));
      const bytes = parts.held + deflated.held;
      lru.set(key, { version, status: page.status, headers: page.headers, nonce, parts: parts.views, deflated: deflated.views, bytes });
    }
    sendPage(req, res, page, gzip, "miss");
  }

  return {
    serve,
    get size() {
      return lru.size;
    },
    get heldBytes() {
      // Each allocation once, whole: what the stored buffers keep alive, whatever they view of it.
      const held = new Set<ArrayBufferLike>();
      for (const page of lru.values()) for (const b of [...page.parts, ...page.deflated]) held.add(b.buffer);
      let bytes = 0;
      for (const a of held) bytes += a.byteLength;
      return bytes;
    },
  };
}
