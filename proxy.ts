import { NextResponse, type NextRequest } from "next/server";
import { PAGE_HEADER, REFRESH_HEADER, pageKeyOf, toHeader } from "./web/page-key";

/** The Content-Security-Policy of a page, with this request's nonce (issue: security headers). */
export function contentSecurityPolicy(nonce: string, dev = false): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Every request: a fresh nonce, the security headers, and HTTP 400 for a search with a bad query. */
export function proxy(request: NextRequest) {
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const csp = contentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  const requestHeaders = new Headers(request.headers);
  const { pathname, searchParams } = request.nextUrl;
  const key = pageKeyOf(pathname, searchParams);
  // Pages stream, so their status is decided here, before the first byte: a bad query is HTTP 400,
  // an entity path that is not a domain 404; other paths are left alone.
  const status = key ? 200 : pathname === "/search" ? 400 : /^\/entity\/[^/]*\/?$/.test(pathname) ? 404 : 200;
  // Which page this is, for the layout's <head> (its JSON-LD, SPEC §8); never the client's word.
  requestHeaders.delete(PAGE_HEADER);
  requestHeaders.delete(REFRESH_HEADER);
  if (key) {
    requestHeaders.set(PAGE_HEADER, toHeader(key));
    if (searchParams.get("refresh") === "1") requestHeaders.set(REFRESH_HEADER, "1");
  }
  requestHeaders.set("content-security-policy", csp);
  const response =
    status !== 200
      ? NextResponse.rewrite(request.nextUrl, { status, request: { headers: requestHeaders } })
      : NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("Content-Security-Policy", csp);
  response.headers.set("X-Content-Type-Options", "nosniff");
  response.headers.set("Referrer-Policy", "strict-origin-when-cross-origin");
  response.headers.set("X-Frame-Options", "DENY");
  return response;
}

export const config = {
  matcher: [{ source: "/((?!_next/static|_next/image|favicon.ico).*)" }],
};
