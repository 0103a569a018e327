/**
 * The one thin adapter between the framework and the resolver (STYLE): reads the configuration,
 * builds one resolver per server process, and wraps its calls in React's per-request cache so a
 * page and its metadata share one resolution. Pages, the API and the CLI all use the same resolver.
 */
import "server-only";
import { headers } from "next/headers";
import { cache } from "react";
import { streamsTo } from "./clients";
import { configErrorMessage, parseConfig, type Config } from "../lib/config";
import { createConfiguredResolver } from "../lib/setup";
import { parseQuery } from "../lib/protocol/ids";
import type { EntityResult } from "../lib/result/record";
import { createPageCache, type PageCache } from "./page-cache";
import { fromHeader, PAGE_HEADER, pageKeyOf, parsePageKey, REFRESH_HEADER } from "./page-key";
import { clientKey, createRateLimiter, type RateDecision } from "./rate-limit";
import type { Resolver } from "../lib/resolver";
import { settledNow } from "./settled";

type Server = { config: Config; resolver: Resolver; refreshLimiter: (key: string) => RateDecision };

/** Validates the environment (SPEC §8); throws one message naming every bad variable. */
export function loadConfig(): Config {
  const parsed = parseConfig(process.env);
  if (!parsed.ok) throw new Error(configErrorMessage(parsed.errors));
  return parsed.config;
}

/** `__identPages` is how the production server (web/serve.js) reaches the page cache. */
const holder = globalThis as typeof globalThis & { __identServer?: Server; __identPages?: PageCache };

function server(): Server {
  if (!holder.__identServer) {
    const config = loadConfig();
    holder.__identServer = { config, resolver: createConfiguredResolver(config), refreshLimiter: createRateLimiter({ limit: 5, windowMs: 60_000 }) };
    // Only interactive browsers are answered from it: other clients get a page rendered whole for them.
    holder.__identPages = createPageCache({ version: pageVersion, serves: (req) => streamsTo(req.headers["user-agent"] ?? null) });
  }
  return holder.__identServer;
}

/** The app's public origin, for canonical URLs. */
export const publicUrl = () => server().config.publicUrl;

/** A whole search (SPEC §7), once per request. */
export const search = cache((q: string, refresh: boolean) => server().resolver.search(q, { refresh }));

/** An entity for streaming: the document first, each claim as it settles; once per request. */
export const stagedEntity = cache((domain: string, refresh: boolean) => server().resolver.resolveEntityStaged(domain, { refresh }));

/**
 * Whether this client may force a re-fetch now (SPEC §9). The client is the rightmost trusted hop
 * of X-Forwarded-For (the Next server appends the socket address), never a header it wrote itself.
 */
export function mayRefresh(headers: Headers): RateDecision {
  const { config, refreshLimiter } = server();
  return refreshLimiter(clientKey(headers.get("x-forwarded-for"), config.trustedHops));
}

/** Whether this request's `?refresh=1` is granted. Once per request, so a page spends one token. */
export const pageRefresh = cache(async (asked: boolean): Promise<boolean> => asked && mayRefresh(await headers()).ok);

/**
 * The results whose JSON-LD this request puts in the document head (SPEC §8, §10), or null when the
 * page puts it in the body. A client that is not an interactive browser gets the whole page, so its
 * head waits for every claim. A browser gets the head at once: with the JSON-LD when every document
 * is already cached, else without it, and the body carries it once the claims settle. Once per
 * request, so the layout and the page get the same answer.
 */
export const headJsonLd = cache(async (key: string, refreshAsked: boolean): Promise<EntityResult[] | null> => {
  const page = parsePageKey(key);
  if (!page) return null;
  const whole = !streamsTo((await headers()).get("user-agent"));
  const settle = <T>(p: Promise<T>): Promise<T | null> => (whole ? p : settledNow(p));
  const refresh = await pageRefresh(refreshAsked);
  let domain = page.kind === "entity" ? page.domain : null;
  if (page.kind === "search") {
    const parsed = parseQuery(page.q);
    if (!parsed.ok) return null;
    const { query } = parsed;
    if (query.kind === "property_id" || query.kind === "credential_id") {
      const out = await settle(search(query.input, refresh));
      return out?.ok ? out.response.results : null;
    }
    domain = query.domain;
  }
  if (domain === null) return null;
  // The whole chain is timed, entity document included: a browser's head never waits for a fetch.
  const result = await settle(stagedEntity(domain, refresh).then((staged) => staged.result));
  return result ? [result] : null;
});

/** The results whose JSON-LD the root layout puts in this request's head (none for most pages). */
export async function layoutJsonLd(): Promise<EntityResult[]> {
  const h = await headers();
  const key = fromHeader(h.get(PAGE_HEADER));
  return key ? ((await headJsonLd(key, h.get(REFRESH_HEADER) === "1")) ?? []) : [];
}

/**
 * The results whose JSON-LD the layout put in the head of page `key`, or null. The page then leaves
 * the JSON-LD out of the body, and renders those results at once: they are already known.
 */
export async function resultsInHead(key: string, refreshAsked: boolean): Promise<EntityResult[] | null> {
  const h = await headers();
  return fromHeader(h.get(PAGE_HEADER)) === key ? headJsonLd(key, refreshAsked) : null;
}

/**
 * What an entity or search page shows, as text: the resolver's whole answer for it, when every
 * document it needs is cached; else null, and the page is rendered afresh (lib/page-cache.ts). Two
 * equal versions render the same page: nothing else a page shows depends on the request.
 */
async function pageVersion(url: URL): Promise<string | null> {
  if (url.searchParams.has("refresh")) return null;
  const page = parsePageKey(pageKeyOf(url.pathname, url.searchParams) ?? "");
  if (!page) return null;
  const { resolver } = server();
  const known = await settledNow<unknown>(page.kind === "entity" ? resolver.resolveEntity(page.domain) : resolver.search(page.q));
  return known === null ? null : JSON.stringify(known);
}
