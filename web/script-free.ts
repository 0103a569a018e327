/**
 * Read pages ship no framework script (docs/decisions.md#cold-pages). A result page is read, not
 * used: everything it shows is server-rendered HTML, its streamed parts are revealed by React's own
 * inline scripts, its links and forms work as plain HTML. The App Router still sends its runtime
 * (about 580 KB of script, and the page's RSC payload again as inline scripts); a browser on a cold
 * page spent its main thread, and on a small machine the server's CPU, on them while the entity's
 * header waited. So, on the pages named below, this removes from the HTML Next writes:
 *
 * - `<script src="/_next/…">` (the runtime's chunks) and `<link rel="preload" as="script">` /
 *   `rel="modulepreload"` for them;
 * - inline scripts that only feed the runtime: `self.__next_f` (the RSC payload) and Turbopack's
 *   chunk list (`globalThis["TURBOPACK"]`).
 *
 * Everything else stays: React's `$RC` reveals, JSON-LD, `<noscript>`, the app's own inline scripts.
 * A dropped tag that carried an id leaves an empty `<template>` with it: Turbopack's bootstrap script
 * carries React's shell id (`_R_`), which an experimental React points a render-blocking
 * `<link rel="expect" href="#_R_">` at; without the element, first paint would wait for the last byte.
 * Pages with client behaviour (the publisher's check with its copy buttons, error pages with "try
 * again") keep the runtime. Compression happens after the rewrite (serve.js puts `compression` under
 * it), so Next's own is off (next.config.js).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { StringDecoder } from "node:string_decoder";
import compression from "compression";
import { acceptsGzip } from "./page-cache";

/** Pages that are read, not used: the home page, entity, issuer, search and lookup pages, reasons. */
const READ_PAGES = /^\/(?:|entity\/[^/]*\/?|issuer\/[^/]*\/?|search|reasons)$/;

/** An inline script whose only reader is the framework's runtime. */
const RUNTIME_FEED = /^\s*(?:\(?self\.__next_f\b|\(globalThis\["TURBOPACK"\])/;

/** Whether a complete `<script …>…</script>` or `<link …>` element belongs to the framework's runtime. */
export function isRuntimeTag(tag: string): boolean {
  const open = tag.slice(0, tag.indexOf(">") + 1);
  if (open.startsWith("<link")) {
    const rel = /\srel="([^"]*)"/.exec(open)?.[1] ?? "";
    return rel === "modulepreload" || (rel === "preload" && /\sas="script"/.test(open));
  }
  if (/\ssrc="\/_next\//.test(open)) return true;
  return RUNTIME_FEED.test(tag.slice(open.length, tag.length - "</script>".length));
}

const OPENERS = ["<script", "<link"];

/** What stands in for a dropped tag: nothing, or an empty template keeping its id. */
function placeholderOf(tag: string): string {
  const id = /\sid="([^"]*)"/.exec(tag.slice(0, tag.indexOf(">") + 1))?.[1];
  return id === undefined ? "" : `<template id="${id}"></template>`;
}

type Callback = (error?: Error | null) => void;

/**
 * Removes the runtime's tags from HTML that arrives in pieces, cut anywhere: a tag is held until it
 * is whole, everything before it passes at once. React escapes `<` in text and attributes, and in
 * inline JSON (`\u003c`), so `<script` and `<link` are only ever tags.
 */
export class RuntimeStripper {
  private pending = "";
  /** How far into a held tag its end has been looked for: a long inline script is not scanned again from its start. */
  private searched = 0;
  private readonly decoder = new StringDecoder("utf8");

  /** What of `chunk` (with what was held) can be sent now. */
  push(chunk: Buffer | string): string {
    // Strings too go through the decoder, so one never overtakes a character cut at a piece's end.
    this.pending += this.decoder.write(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    let out = "";
    let from = 0;
    // Where each opener next occurs in this text, found once and reused until passed: one scan per
    // push however many tags a piece holds (Next sends the claims that settle together as one piece).
    const found = new Map<string, number>();
    for (;;) {
      const at = nextOpener(this.pending, from, found);
      if (at === -1) {
        // Hold a tail that could be the start of an opener ("<scr").
        const lt = this.pending.lastIndexOf("<");
        const keep = lt >= from && OPENERS.some((o) => o.startsWith(this.pending.slice(lt))) ? lt : this.pending.length;
        out += this.pending.slice(from, keep);
        this.pending = this.pending.slice(keep);
        return out;
      }
      out += this.pending.slice(from, at);
      const end = tagEnd(this.pending, at, at === 0 ? Math.max(0, this.searched - "</script>".length) : at);
      if (end === -1) {
        this.pending = this.pending.slice(at);
        this.searched = this.pending.length;
        return out;
      }
      this.searched = 0;
      const tag = this.pending.slice(at, end);
      if (!isRuntimeTag(tag)) out += tag;
      else out += placeholderOf(tag);
      from = end;
    }
  }

  /** Whatever is still held, as it came: a tag cut off by the end of the page is not ours to judge. */
  end(): string {
    const rest = this.pending + this.decoder.end();
    this.pending = "";
    this.searched = 0;
    return rest;
  }
}

function nextOpener(text: string, from: number, found: Map<string, number>): number {
  let best = -1;
  for (const opener of OPENERS) {
    let at = found.get(opener);
    if (at === undefined || (at !== -1 && at < from)) {
      at = text.indexOf(opener, from);
      // `<scriptx` or `<linked` is not the element.
      while (at !== -1 && /[\w-]/.test(text[at + opener.length] ?? " ")) at = text.indexOf(opener, at + 1);
      found.set(opener, at);
    }
    if (at !== -1 && (best === -1 || at < best)) best = at;
  }
  return best;
}

/** Where the element starting at `at` ends (after `</script>` or the link's `>`), or -1 when not yet arrived. */
function tagEnd(text: string, at: number, searchFrom: number): number {
  if (text.startsWith("<link", at)) {
    const gt = text.indexOf(">", searchFrom);
    return gt === -1 ? -1 : gt + 1;
  }
  const close = text.indexOf("</script>", searchFrom);
  return close === -1 ? -1 : close + "</script>".length;
}

/** Whether the page at `pathname` ships without the runtime. */
export function isReadPage(pathname: string): boolean {
  return READ_PAGES.test(pathname);
}

/**
 * Strips the runtime's tags from what Next writes to `res` for a read page, when it is an HTML answer
 * below 500 (an error page keeps "try again"). Installed above the compression layer, so it sees the
 * HTML itself; drops Content-Length, which no longer holds.
 */
function stripRuntime(req: IncomingMessage, res: ServerResponse): void {
  const pathname = (req.url ?? "/").split("?")[0] ?? "/";
  if ((req.method !== "GET" && req.method !== "HEAD") || !isReadPage(pathname)) return;
  const inner = { write: res.write, end: res.end, writeHead: res.writeHead, flushHeaders: res.flushHeaders };
  let stripper: RuntimeStripper | null | undefined;
  /** Decided once, when the headers are about to leave. */
  const decide = (): RuntimeStripper | null => {
    if (stripper !== undefined) return stripper;
    const type = String(res.getHeader("content-type") ?? "");
    stripper = res.statusCode < 500 && type.startsWith("text/html") ? new RuntimeStripper() : null;
    if (stripper && !res.headersSent) res.removeHeader("content-length");
    return stripper;
  };
  const callbackOf = (...args: unknown[]) => args.find((a): a is Callback => typeof a === "function");
  /** A piece as bytes, a string in the encoding it was given in (the decoder keeps a character cut between pieces whole). */
  const bytesOf = (chunk: string | Uint8Array, encoding: unknown): Buffer =>
    typeof chunk === "string"
      ? Buffer.from(chunk, typeof encoding === "string" && Buffer.isEncoding(encoding) ? encoding : "utf8")
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    res.statusCode = status;
    // Headers given here are applied first, so that the decision sees them and Content-Length can go:
    // an object, or Node's flat list of names and values.
    const headers = rest.find((r): r is Record<string, string | number | string[]> | unknown[] => typeof r === "object" && r !== null);
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2) res.appendHeader(String(headers[i]), String(headers[i + 1]));
    } else for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) res.setHeader(name, value);
    const message = rest.find((r): r is string => typeof r === "string");
    decide();
    return message === undefined
      ? inner.writeHead.call(res, status)
      : (inner.writeHead as (s: number, m: string) => ServerResponse).call(res, status, message);
  } as typeof res.writeHead;
  res.flushHeaders = function (this: ServerResponse) {
    decide();
    inner.flushHeaders.call(res);
  };
  // The compression layer below takes no callbacks: they are called here once the piece is handed on.
  res.write = function (this: ServerResponse, ...args: unknown[]) {
    const s = decide();
    const [chunk, encoding, cb] = args;
    if (!s || (typeof chunk !== "string" && !(chunk instanceof Uint8Array)))
      return (inner.write as (...a: unknown[]) => boolean).apply(res, args);
    const callback = callbackOf(encoding, cb);
    const text = s.push(bytesOf(chunk, encoding));
    const ok = text === "" ? true : inner.write.call(res, text, "utf8");
    if (callback) process.nextTick(callback);
    return ok;
  } as typeof res.write;
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    const s = decide();
    if (!s) return (inner.end as (...a: unknown[]) => ServerResponse).apply(res, args);
    const [chunk, encoding, cb] = args;
    const callback = callbackOf(chunk, encoding, cb);
    const body = typeof chunk === "string" || chunk instanceof Uint8Array ? chunk : undefined;
    const text = (body === undefined ? "" : s.push(bytesOf(body, encoding))) + s.end();
    if (callback) res.once("finish", () => callback());
    return inner.end.call(res, text, "utf8");
  } as typeof res.end;
}

/** gzip when the client takes it, for whatever Next writes (the `compression` middleware; Next's own is off). */
const compress = compression();

/**
 * What web/serve.js puts around Next for each request it hands it: compression below, the read
 * pages' rewrite above, so the rewrite reads HTML and the client gets it compressed.
 */
export function aroundNext(req: IncomingMessage, res: ServerResponse): void {
  // gzip or nothing, as Next's own compression offered: a Brotli stream holds about 590 KB while a
  // page streams, gzip about 230 KB (measured, quality 4 as the middleware sets it), and a cold page
  // holds its stream open until its last claim settles (docs/decisions.md#memory).
  if (acceptsGzip(req.headers["accept-encoding"])) req.headers["accept-encoding"] = "gzip";
  else delete req.headers["accept-encoding"];
  compress(req as Parameters<typeof compress>[0], res as Parameters<typeof compress>[1], () => {});
  stripRuntime(req, res);
}
