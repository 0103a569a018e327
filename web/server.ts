/**
 * The one thin adapter between the framework and the resolver (docs/architecture.md): reads the
 * configuration once, builds one resolver, one refresh limiter and one page cache per server process,
 * and hands them to the pages, the API and the production server. The CLI builds the same resolver
 * from the same configuration (lib/setup.ts), so they never disagree.
 */
import "server-only";
import { configErrorMessage, parseConfig, type Config } from "@/lib/config";
import type { RateLimiter } from "@/lib/rate-limit";
import type { Crawler } from "@/lib/discovery/crawler";
import { createConfiguredResolver, openConfiguredIndex, type ConfiguredResolver } from "@/lib/setup";
import { streamsTo } from "./clients";
import { createPageCache, type PageCache, type PageVersion } from "./page-cache";
import { isAnswer, pageOf } from "./pages";
import { OVER_LIMIT_DELAY_MS } from "./admission";
import { clientKey } from "./rate-limit";
import { createLogger, type Logger } from "@/lib/log";
import type { IncomingMessage, ServerResponse } from "node:http";
import { serveApi } from "./api";

export type App = {
  config: Config;
  resolver: ConfiguredResolver;
  /** `?refresh=1` per client (docs/decisions.md#caching). */
  refreshLimit: RateLimiter;
  /** Lookups that start a fetch, per client (docs/decisions.md#outbound-work). */
  coldLimit: RateLimiter;
  /** Warm pages, kept whole; web/serve.js puts it in front of Next. */
  pages: PageCache;
  /** Answers the API's lookups without Next (web/api.ts); false for a request it leaves to Next. web/serve.js asks it first. */
  api(req: IncomingMessage, res: ServerResponse): boolean;
  /** The client of a request, from its X-Forwarded-For (the rate limits' key; web/serve.js uses it too). */
  clientOf(forwardedFor: string | null): string;
  /** How long a client past its own limit waits for its 429 (web/admission.ts, web/serve.js). */
  overLimitDelayMs: number;
  /** Structured logs (docs/deploying.md#logs); web/serve.js writes its request lines with it. */
  log: Logger;
  /** Discovery and re-verification; null when off (`IDENT_CRAWL=0`) or without an index. */
  crawler?: Promise<Crawler | null>;
};

/** Validates the environment (docs/decisions.md#configuration); throws one message naming every bad variable. */
export function loadConfig(): Config {
  const parsed = parseConfig(process.env);
  if (!parsed.ok) throw new Error(configErrorMessage(parsed.errors));
  return parsed.config;
}

/**
 * The process's app, on `globalThis` because Next may load this module more than once (one copy per
 * bundle), and because the production server (web/serve.js), outside the bundle, takes the page cache
 * from it.
 */
const holder = globalThis as typeof globalThis & { __identApp?: App };

export function app(): App {
  if (holder.__identApp) return holder.__identApp;
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const warn = (line: string) => log.warn(line);
  const index = openConfiguredIndex(config, warn);
  const resolver = createConfiguredResolver(config, { store: index.store, log: warn, fetchThread: true });
  const built: App = {
    config,
    resolver,
    // Clients are keyed by the rightmost trusted hop of X-Forwarded-For (web/admission.ts).
    refreshLimit: resolver.clientLimits.refresh,
    coldLimit: resolver.clientLimits.cold,
    clientOf: (forwardedFor) => clientKey(forwardedFor, config.trustedHops),
    log,
    overLimitDelayMs: OVER_LIMIT_DELAY_MS,
    pages: createPageCache({
      version: (url) => pageVersion(resolver, url),
      generation: () => resolver.generation(),
      // Next streams metadata to browsers and blocks on it for other clients: one copy of each.
      variant: (req) => (streamsTo(req.headers["user-agent"] ?? null) ? "browser" : "agent"),
    }),
    api: (req, res) => serveApi(built, req, res),
  };
  holder.__identApp = built;
  // docs/decisions.md#discovery: background resolutions start with the server.
  built.crawler = index.startCrawler(resolver);
  return built;
}

/**
 * What an entity or lookup page shows, as text: the resolver's whole answer from the cache alone; null
 * when a document it needs is not cached, or for a refresh, and the page is rendered afresh. Two equal
 * versions render the same page: nothing else a page shows depends on the request. The home page
 * has one version.
 */
async function pageVersion(resolver: ConfiguredResolver, url: URL): Promise<PageVersion | string | null> {
  // The home page shows nothing but the build's own text: one version, so it is served from the
  // store however busy the lookups keep Next (docs/decisions.md#outbound-work).
  if (url.pathname === "/" && url.search === "") return "home";
  if (url.searchParams.has("refresh")) return null;
  const page = pageOf(url.pathname, url.searchParams);
  if (!isAnswer(page)) return null;
  const known = await resolver.probe(page.query);
  return known.state === "cached" ? { text: JSON.stringify(known.response), until: known.until } : null;
}
