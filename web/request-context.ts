/**
 * Each request's context (docs/architecture.md#one-request-one-decision): what the server decided
 * about it before Next ran (its route, its client, its admission, its results started, the status it
 * is sent with), read by the pages through {@link requestContext}. It reaches them through the
 * request's own async context (web/bridge.ts), never through a header written and parsed back.
 */
import type { Admission } from "./admission";
import { bridge } from "./bridge";
import type { Delivery } from "./delivery";
import type { Route } from "./routes";

export type RequestContext = {
  /** The request's id (X-Request-Id), written with every log line made while it runs. */
  id: string;
  route: Route;
  /** The client's key for the limits (lib/traffic/client.ts), and the X-Forwarded-For it came from. */
  client: string;
  forwardedFor: string | null;
  userAgent: string | null;
  /** This response's CSP nonce (docs/decisions.md#security-headers). */
  nonce: string;
  /** What admission decided for a page that needed it (a lookup, the check, a search of the index); null otherwise. */
  admission: Admission | null;
  /** An answer page's results, started as soon as the request was admitted; null for any other page. */
  delivery: Promise<Delivery> | null;
  /** The status and headers the page goes with (a refusal's, a bad query's), decided before its first byte. */
  head: { status: number; headers: Record<string, string> };
};

/** The context of the request this code runs for; null outside one (a build, a test, the crawler). */
export function requestContext(): RequestContext | null {
  return bridge().requests.getStore() ?? null;
}
