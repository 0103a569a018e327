/**
 * What every answer of the API carries for builders (docs/api.md): CORS for any origin, an `ETag`
 * from the content with `If-None-Match` answered 304, and the client's limits in the IETF httpapi
 * rate-limit headers (draft 11). Framework-free: the production server and the Next routes use it alike.
 */
import { createHash } from "node:crypto";
import { LIMITS, type TrafficSettings, type Windows } from "ident-resolver/traffic";
import { windowSpanMs } from "ident-resolver/traffic";

/**
 * Any origin may read the API (no credentials: nothing it answers depends on a cookie). The headers a
 * script needs beyond the safelisted ones are exposed.
 */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": "ETag, RateLimit, RateLimit-Policy, Retry-After, X-Request-Id",
};

/** The answer to a preflight: the methods the API takes, the headers a client may send, cached for a day. */
export const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = Object.assign({}, CORS_HEADERS, {
  "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
  "Access-Control-Allow-Headers": "If-None-Match, Cache-Control, X-Request-Id",
  "Access-Control-Max-Age": "86400",
});

/** A strong validator of `body`: the same bytes give the same tag on every instance. */
export function etagOf(body: Buffer | string): string {
  return `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
}

/**
 * Whether `ifNoneMatch` (the request's header) names `etag` (RFC 9110 §13.1.2: weak comparison, so a
 * `W/` prefix added by a proxy still matches; `*` matches any current answer).
 */
export function notModified(ifNoneMatch: string | null | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}

/** The limits an API client sees, by the name its headers give them. */
const POLICIES = [
  { name: "cold", window: "coldLookups" },
  { name: "search", window: "searches" },
  { name: "reads", window: "storeReads" },
] as const satisfies readonly { name: string; window: keyof Windows & keyof TrafficSettings }[];

/**
 * `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers-11): the client's cold lookups, its
 * searches of the index and all its reads of the index, each a quota `q` over `w` seconds. The same for every client, so every API
 * answer carries it, those a shared cache may keep included.
 */
export function rateLimitPolicy(settings: TrafficSettings): Record<string, string> {
  const policy = POLICIES.map((p) => `"${p.name}";q=${settings[p.window]};w=${windowSpanMs(LIMITS[p.window]) / 1000}`);
  return { "RateLimit-Policy": policy.join(", ") };
}

/**
 * `RateLimit-Policy` and `RateLimit` for `client`: what it has left of each policy, `r`, and `t`
 * seconds until the oldest counted one leaves the window. Counts nothing. `RateLimit` is one
 * client's own: it goes only on answers no shared cache keeps (docs/api.md#limits).
 */
export async function rateLimitHeaders(windows: Windows, client: string): Promise<Record<string, string>> {
  const usage = await Promise.all(POLICIES.map((p) => windows[p.window].usage(client)));
  const policy: string[] = [];
  const now: string[] = [];
  POLICIES.forEach((p, i) => {
    const u = usage[i];
    if (!u) return;
    policy.push(`"${p.name}";q=${u.limit};w=${u.windowS}`);
    now.push(`"${p.name}";r=${u.remaining};t=${u.resetS}`);
  });
  return { "RateLimit-Policy": policy.join(", "), RateLimit: now.join(", ") };
}

/** Whether a shared cache may keep an answer with these headers: then it carries no one client's counters. */
export const sharedCacheMayKeep = (headers: Readonly<Record<string, string>>): boolean =>
  /(?:^|,)\s*public\b/i.test(headers["Cache-Control"] ?? "");
