/**
 * Each request's context (docs/architecture.md#one-request-one-decision): what the server decided
 * about it before Next ran (its route, its client, its admission, its results started, the status it
 * is sent with), read by the pages through {@link requestContext}. It reaches them through the
 * request's own async context (web/bridge.ts), never through a header written and parsed back.
 */
import { bridge } from "./bridge";
import type { RequestContext } from "./decision";

export type { RequestContext } from "./decision";

/** The context of the request this code runs for; null outside one (a build, a test, the crawler). */
export function requestContext(): RequestContext | null {
  return bridge().requests.getStore() ?? null;
}
