/**
 * A body on Node's streams, read the one way both Node fetchers read it (docs/decisions.md#fetching):
 * only the encodings decoded with a bounded window, the cap counted after decoding, and the rest
 * never read once the cap is passed (./fetcher.ts over undici, ./portable.ts over `node:https`).
 */
import type { Readable } from "node:stream";
import { FetchStop } from "./target.ts";

/** Drops a body without reading it; a stream destroyed this way must not throw an unhandled error. */
export function discard(stream: Readable): void {
  stream.on("error", () => undefined);
  stream.destroy();
}

/** A header's first value, or null. */
export function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

/** Reads a body, decoding its Content-Encoding, and stops as soon as it passes `cap` bytes. */
export async function readCapped(body: Readable, encoding: string, cap: number): Promise<Buffer> {
  let stream: Readable = body;
  const gzip = encoding === "gzip" || encoding === "x-gzip";
  if (!gzip && encoding !== "deflate" && encoding !== "identity") {
    discard(body);
    throw new FetchStop("unreachable", `unsupported Content-Encoding ${encoding}`);
  }
  if (encoding !== "identity") {
    // Loaded by the first compressed body, not with the package (docs/library.md#figures); the body
    // may fail while they load, before the pipeline listens.
    body.on("error", () => undefined);
    const [zlib, { pipeline }] = await Promise.all([import("node:zlib"), import("node:stream")]);
    stream = pipeline(body, gzip ? zlib.createGunzip() : zlib.createInflate(), () => undefined);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      const buf = chunk as Buffer;
      total += buf.byteLength;
      if (total > cap) throw new FetchStop("too_large", `body is over the ${cap}-byte limit`);
      chunks.push(buf);
    }
  } finally {
    discard(body);
    if (stream !== body) discard(stream);
  }
  return Buffer.concat(chunks, total);
}
