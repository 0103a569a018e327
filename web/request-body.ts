/**
 * A request's body read without Next (the re-check form, a new webhook, a WebSub request): at most
 * `cap` bytes, the rest never buffered. The front door has already refused a longer Content-Length
 * (web/front.ts); this is the bound on a body that lies about its length or is chunked.
 */
import type { IncomingMessage } from "node:http";

/** The body as UTF-8, or null past `cap` bytes. */
export function bodyOf(req: IncomingMessage, cap: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    req.on("data", (chunk: Buffer) => {
      length += chunk.length;
      if (length > cap) {
        req.removeAllListeners("data");
        req.resume();
        return resolve(null);
      }
      chunks.push(chunk);
    });
    req.once("end", () => resolve(length > cap ? null : Buffer.concat(chunks).toString("utf8")));
    req.once("error", reject);
  });
}
