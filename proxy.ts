import { NextResponse, type NextRequest } from "next/server";
import { ADMISSION_HEADER, admit, admitSearch, relay } from "./web/admission";
import { DELIVERY_HEADER, startEarly } from "./web/delivery";
import { isAnswer, pageOf, statusOf, toHeader, URL_HEADER } from "./web/pages";
import { app } from "./web/app";
import { contentSecurityPolicy, SECURITY_HEADERS } from "./web/security-headers";
import type { ErrorBody } from "./lib/result/record";
import { answerRefusal } from "./lib/traffic/answer";

/**
 * Every request: a fresh nonce, the security headers, HTTP 400 for a search with a bad query, 404 for
 * an entity path that is not a domain, and the admission of every entity and lookup page.
 */
export async function proxy(request: NextRequest) {
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const csp = contentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  const requestHeaders = new Headers(request.headers);
  const { pathname, search, searchParams } = request.nextUrl;
  // An API path Next could not decode into its parameters (malformed percent-encoding) is a bad
  // query in JSON, never a 500 (docs/decisions.md#interfaces).
  if (pathname.startsWith("/api/") && !decodes(pathname)) {
    const body: ErrorBody = { error: { code: "invalid_query", message: "The path is not valid percent-encoded UTF-8." } };
    return NextResponse.json(body, {
      status: 400,
      headers: { "Cache-Control": "no-store", "Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff" },
    });
  }
  // Pages stream, so their status is decided here, before the first byte: a bad query is HTTP 400,
  // an entity path that is not a domain 404; other paths are left alone.
  const page = pageOf(pathname, searchParams);
  let status = statusOf(page);
  // The URL, for the layout, which cannot read it (web/page-request.ts); always ours, never the client's.
  requestHeaders.set(URL_HEADER, toHeader(pathname + search));
  // docs/architecture.md#traffic: a lookup is taken on, or refused with 429 or 503, before its first byte.
  requestHeaders.delete(ADMISSION_HEADER);
  requestHeaders.delete(DELIVERY_HEADER);
  let refusedHeaders: Record<string, string> | null = null;
  if (page?.kind === "index-search") {
    // docs/architecture.md#traffic: `searches`; the page reads the refusal from the relayed admission.
    const forwardedFor = request.headers.get("x-forwarded-for");
    const admitted = await admitSearch(app(), forwardedFor);
    // A search the instance could not run now is refused before the first byte, with its status.
    const busy = admitted.ok ? app().resolver.traffic.searches.wouldRefuse(app().clientOf(forwardedFor)) : null;
    const refused = admitted.ok ? (busy ? { ok: false as const, refused: busy } : null) : admitted;
    if (refused) {
      requestHeaders.set(ADMISSION_HEADER, relay(refused));
      const answer = answerRefusal(refused.refused);
      status = answer.status;
      refusedHeaders = answer.headers;
    }
  } else if (isAnswer(page) || page?.kind === "check") {
    // The check is always a fresh check (docs/publishing.md#check): it asks for a refresh, and its limit.
    const refresh = page.kind === "check" || searchParams.get("refresh") === "1";
    const admission = await admit(app(), page.query, request.headers.get("x-forwarded-for"), refresh);
    requestHeaders.set(ADMISSION_HEADER, relay(admission));
    if (admission.ok && isAnswer(page)) {
      // docs/decisions.md#cold-pages: a cold page's results start now, not when Next reaches the page.
      const admitted = { refresh: admission.refresh, known: admission.known !== null, client: admission.client, starts: admission.starts };
      const token = await startEarly(app(), { method: request.method, url: request.nextUrl, headers: request.headers }, page, admitted);
      if (token) requestHeaders.set(DELIVERY_HEADER, token);
    }
    if (!admission.ok) {
      // docs/architecture.md#traffic: the page's status and headers; its words are the page's to show.
      const answer = answerRefusal(admission.refused);
      status = answer.status;
      refusedHeaders = answer.headers;
    }
  }
  requestHeaders.set("content-security-policy", csp);
  // A bad query or path is answered by a fixed page of this app with its status: the query form (which
  // reads the relayed URL) or the not-found page. Never the same URL again, whose bad encoding would
  // reach Next's route matching (docs/decisions.md#interfaces).
  // A refused lookup is the same page, which reads its refusal from the relayed admission.
  const response =
    status === 200
      ? NextResponse.next({ request: { headers: requestHeaders } })
      : NextResponse.rewrite(
          new URL(
            status === 400 ? (page?.kind === "bad-check" ? "/check" : "/search") : status === 404 ? "/_not-found" : pathname + search,
            request.nextUrl,
          ),
          {
            status,
            request: { headers: requestHeaders },
          },
        );
  for (const [name, value] of Object.entries(refusedHeaders ?? {})) response.headers.set(name, value);
  response.headers.set("Content-Security-Policy", csp);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.headers.set(name, value);
  return response;
}

export const config = {
  matcher: [{ source: "/((?!_next/static|_next/image|favicon.ico).*)" }],
};

function decodes(path: string): boolean {
  try {
    path.split("/").forEach((segment) => decodeURIComponent(segment));
    return true;
  } catch {
    return false;
  }
}
