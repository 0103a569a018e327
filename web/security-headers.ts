/**
 * The security headers of every response (docs/decisions.md#security-headers), defined here once:
 * a page's policy with its nonce and the headers beside it (web/server.ts sets them before Next
 * renders), and the strict policy of every answer that is not a page (`send`, web/response.ts).
 */

import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const builtStyles = new Map<string, string>();

/**
 * The hashes of the built stylesheets, which Next puts inline in every page (`inlineCss`,
 * docs/decisions.md#cold-pages) without a nonce: the policy allows exactly those, by content. Read
 * once from `.next/static`; none in development, where nothing is inlined.
 */
export function builtStyleHashes(dir = path.join(process.cwd(), ".next", "static")): string {
  const hashed = builtStyles.get(dir);
  if (hashed !== undefined) return hashed;
  let files: string[] = [];
  try {
    files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".css"));
  } catch {
    // no build here (development, or the tests)
  }
  const hashes = files
    .map(
      (f) =>
        ` 'sha256-${createHash("sha256")
          .update(readFileSync(path.join(dir, f)))
          .digest("base64")}'`,
    )
    .sort()
    .join("");
  builtStyles.set(dir, hashes);
  return hashes;
}

/** The Content-Security-Policy of a page, with this request's nonce. */
export function contentSecurityPolicy(nonce: string, dev = false): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    `style-src 'self' 'nonce-${nonce}'${dev ? "" : builtStyleHashes()}`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The headers besides the CSP. */
export const SECURITY_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "strict-origin-when-cross-origin",
  "X-Frame-Options": "DENY",
} as const;

/** The policy of every answer that is not a page (a page's own, with its nonce, replaces it: web/server.ts). */
export const STRICT_CSP = "default-src 'none'; frame-ancestors 'none'";

/** What every answer carries (docs/decisions.md#security-headers). */
export const FRONT_HEADERS: Readonly<Record<string, string>> = Object.assign({ "Content-Security-Policy": STRICT_CSP }, SECURITY_HEADERS);
