/**
 * Answers outside React, in one place (docs/architecture.md#the-response): `send` writes every answer
 * the server gives without Next (the front door's refusals, shed requests, the API, stored pages,
 * faults) with the security headers; `intercept` is the one way the server reaches into a response
 * Next writes: the page cache's capture of a page, and `aroundNext`'s decided status and the read
 * pages' rewrite (web/script-free.ts), stacked, each as a layer over the one below.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import compression from "compression";
import { RuntimeStripper } from "./script-free";
import { FRONT_HEADERS, SECURITY_HEADERS } from "./security-headers";

/** Whether the client takes gzip: `gzip` or `*` listed, and not refused with q=0. */
export function acceptsGzip(header: string | undefined): boolean {
  return (header ?? "").split(",").some((entry) => {
    const [name = "", ...params] = entry.split(";").map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith("q="));
    return (name === "gzip" || name === "*") && (q === undefined || Number(q.slice(2)) > 0);
  });
}

export { FRONT_HEADERS, STRICT_CSP } from "./security-headers";

export type Sent = {
  status: number;
  /** Its own headers; the security headers are added, a policy already set on the response is kept. */
  headers?: OutgoingHttpHeaders;
  /** Null for none (a 204, a 304); HEAD sends the headers alone. */
  body: Buffer | string | null;
};

/**
 * Writes a whole answer: status, the security headers (with the strict policy unless the response has
 * its own), `headers`, Content-Length, and the body (none for HEAD).
 */
export function send(req: Pick<IncomingMessage, "method">, res: ServerResponse, sent: Sent): void {
  if (res.destroyed) return;
  const body = sent.body === null ? null : Buffer.isBuffer(sent.body) ? sent.body : Buffer.from(sent.body);
  // Set one by one: names are matched whatever their case, so no header goes out twice.
  for (const [name, value] of Object.entries(res.hasHeader("content-security-policy") ? SECURITY_HEADERS : FRONT_HEADERS))
    res.setHeader(name, value);
  for (const [name, value] of Object.entries(sent.headers ?? {})) if (value !== undefined) res.setHeader(name, value);
  if (body !== null) res.setHeader("Content-Length", String(body.length));
  res.writeHead(sent.status);
  res.end(req.method === "HEAD" || body === null ? undefined : body);
}

/** A short answer in words (text/plain), not to be kept. */
export function sendText(
  req: Pick<IncomingMessage, "method">,
  res: ServerResponse,
  status: number,
  text: string | null,
  headers: OutgoingHttpHeaders = {},
) {
  send(req, res, {
    status,
    headers: Object.assign(text === null ? {} : { "Content-Type": "text/plain; charset=utf-8" }, { "Cache-Control": "no-store" }, headers),
    body: text === null ? null : `${text}\n`,
  });
}

/** A layer over what is written to a response. */
export type Layer = {
  /** Called once, as the head is about to leave (written, or with the first byte): may set the status and headers. */
  head?(res: ServerResponse): void;
  /** Each piece of the body; what it returns goes on (nothing, when empty). Without it, pieces go on as they are. */
  write?(chunk: Buffer): Buffer | string;
  /** At the end: what is still held. */
  end?(): Buffer | string;
  /**
   * Keeps everything: the head and the body go nowhere (the page cache's capture); `ended` is told
   * when the response ends, or null when it closes first, and the response is as it was before.
   */
  keep?: { ended(kept: { status: number; headers: OutgoingHttpHeaders; body: Buffer } | null): void };
};

type Callback = (error?: Error | null) => void;
const callbackOf = (...args: unknown[]) => args.find((a): a is Callback => typeof a === "function");
/** A piece as bytes; a string in the encoding it was given in. */
const bytesOf = (chunk: string | Uint8Array, encoding: unknown): Buffer =>
  typeof chunk === "string"
    ? Buffer.from(chunk, typeof encoding === "string" && Buffer.isEncoding(encoding) ? encoding : "utf8")
    : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);

/**
 * Puts `layer` over `res`'s writeHead, write, end and flushHeaders (whatever they are now: layers
 * stack, the last one put on sees the writes first). The one place the server patches a response.
 */
export function intercept(res: ServerResponse, layer: Layer): void {
  const below = { write: res.write, end: res.end, writeHead: res.writeHead, flushHeaders: res.flushHeaders };
  const restore = () => Object.assign(res, below);
  const held: Buffer[] = [];
  let headed = false;
  let ended = false;
  const head = () => {
    if (headed) return;
    headed = true;
    layer.head?.(res);
  };
  const passOn = (out: Buffer | string) => (typeof out === "string" ? out.length > 0 : out.length > 0);
  res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    res.statusCode = status;
    // Headers given here are applied first, so that the layer sees them: an object, or Node's flat list.
    const headers = rest.find((r): r is Record<string, string | number | string[]> | unknown[] => typeof r === "object" && r !== null);
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2) res.appendHeader(String(headers[i]), String(headers[i + 1]));
    } else for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) res.setHeader(name, value);
    head();
    if (layer.keep) return res;
    const message = rest.find((r): r is string => typeof r === "string");
    return message === undefined
      ? below.writeHead.call(res, res.statusCode)
      : (below.writeHead as (s: number, m: string) => ServerResponse).call(res, res.statusCode, message);
  } as typeof res.writeHead;
  res.flushHeaders = function (this: ServerResponse) {
    head();
    if (!layer.keep) below.flushHeaders.call(res);
  };
  res.write = function (this: ServerResponse, ...args: unknown[]) {
    head();
    const [chunk, encoding, cb] = args;
    const callback = callbackOf(encoding, cb);
    if (typeof chunk !== "string" && !(chunk instanceof Uint8Array)) return (below.write as (...a: unknown[]) => boolean).apply(res, args);
    const bytes = bytesOf(chunk, encoding);
    if (layer.keep) {
      held.push(Buffer.from(bytes));
      callback?.();
      return true;
    }
    if (!layer.write) return (below.write as (...a: unknown[]) => boolean).apply(res, args);
    const out = layer.write(bytes);
    const ok = passOn(out) ? (below.write as (chunk: Buffer | string) => boolean).call(res, out) : true;
    // The compression layer below takes no callbacks: they are called here once the piece is handed on.
    if (callback) process.nextTick(callback);
    return ok;
  } as typeof res.write;
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    head();
    const [chunk, encoding, cb] = args;
    const callback = callbackOf(chunk, encoding, cb);
    const body = typeof chunk === "string" || chunk instanceof Uint8Array ? bytesOf(chunk, encoding) : undefined;
    if (layer.keep) {
      if (body) held.push(Buffer.from(body));
      ended = true;
      restore();
      layer.keep.ended({ status: res.statusCode, headers: res.getHeaders(), body: Buffer.concat(held) });
      callback?.();
      return res;
    }
    if (!layer.write && !layer.end) return (below.end as (...a: unknown[]) => ServerResponse).apply(res, args);
    const parts = [body && layer.write ? layer.write(body) : (body ?? ""), layer.end?.() ?? ""];
    const out = Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : p)));
    if (callback) res.once("finish", () => callback());
    return (below.end as (chunk: Buffer) => ServerResponse).call(res, out);
  } as typeof res.end;
  if (layer.keep) {
    const { keep } = layer;
    res.once("close", () => {
      if (ended) return;
      ended = true;
      restore();
      keep.ended(null);
    });
  }
}

/** gzip when the client takes it, for whatever Next writes (the `compression` middleware; Next's own is off). */
const compress = compression();

/**
 * What the server puts around Next for each page or file it hands it: compression below, then the
 * page's decided head (a refusal's or a bad query's status and headers, where Next would answer 200),
 * and for a read page the rewrite without the framework's runtime (web/script-free.ts) above, so the
 * rewrite reads HTML and the client gets it compressed.
 */
export function aroundNext(
  req: IncomingMessage,
  res: ServerResponse,
  options: { head: { status: number; headers: Record<string, string> }; readPage: boolean },
): void {
  // gzip or nothing, as Next's own compression offered: a Brotli stream holds about 590 KB while a
  // page streams, gzip about 230 KB (measured, quality 4 as the middleware sets it), and a cold page
  // holds its stream open until its last claim settles (docs/decisions.md#memory).
  if (acceptsGzip(req.headers["accept-encoding"])) req.headers["accept-encoding"] = "gzip";
  else delete req.headers["accept-encoding"];
  compress(req as Parameters<typeof compress>[0], res as Parameters<typeof compress>[1], () => {});
  const { status, headers } = options.head;
  const decided = (r: ServerResponse) => {
    // Next answers a page 200; the server decided otherwise before its first byte. Its own errors stand.
    if (r.statusCode !== 200) return;
    r.statusCode = status;
    for (const [name, value] of Object.entries(headers)) r.setHeader(name, value);
  };
  if (!options.readPage || (req.method !== "GET" && req.method !== "HEAD")) {
    if (status !== 200 || Object.keys(headers).length > 0) intercept(res, { head: decided });
    return;
  }
  // The read pages' rewrite, decided once as the head leaves: HTML below 500 (an error page keeps "try again").
  let stripper: RuntimeStripper | null = null;
  intercept(res, {
    head: (r) => {
      decided(r);
      const type = String(r.getHeader("content-type") ?? "");
      if (r.statusCode < 500 && type.startsWith("text/html")) {
        stripper = new RuntimeStripper();
        // Content-Length no longer holds once tags are taken out.
        if (!r.headersSent) r.removeHeader("content-length");
      }
    },
    write: (chunk) => (stripper ? stripper.push(chunk) : chunk),
    end: () => (stripper ? stripper.end() : ""),
  });
}
