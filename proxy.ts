import { NextResponse, type NextRequest } from "next/server";
import { pageOf, statusOf, toHeader, URL_HEADER } from "./web/pages";

/** The Content-Security-Policy of a page, with this request's nonce (docs/decisions.md#security-headers). */
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
  const { pathname, search, searchParams } = request.nextUrl;
  // Pages stream, so their status is decided here, before the first byte: a bad query is HTTP 400,
  // an entity path that is not a domain 404; other paths are left alone.
  const status = statusOf(pageOf(pathname, searchParams));
  // The URL, for the layout, which cannot read it (web/page-request.ts); always ours, never the client's.
  requestHeaders.set(URL_HEADER, toHeader(pathname + search));
  requestHeaders.set("content-security-policy", csp);
  // A bad query or path is answered by a fixed page of this app with its status: the query form (which
  // reads the relayed URL) or the not-found page. Never the same URL again, whose bad encoding would
  // reach Next's route matching (docs/decisions.md#interfaces).
  const response =
    status === 200
      ? NextResponse.next({ request: { headers: requestHeaders } })
      : NextResponse.rewrite(new URL(status === 400 ? "/search" : "/_not-found", request.nextUrl), {
          status,
          request: { headers: requestHeaders },
        });
  response.headers.set("Content-Security-Policy", csp);
  response.headers.set("X-Content-Type-Options", "nosniff");
  response.headers.set("Referrer-Policy", "strict-origin-when-cross-origin");
  response.headers.set("X-Frame-Options", "DENY");
  return response;
}

export const config = {
  matcher: [{ source: "/((?!_next/static|_next/image|favicon.ico).*)" }],
};
