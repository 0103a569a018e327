/**
 * The one thin adapter between the framework and the resolver (STYLE): reads the configuration,
 * builds one resolver per server process, and wraps its calls in React's per-request cache so a
 * page and its metadata share one resolution. Pages, the API and the CLI all use the same resolver.
 */
import "server-only";
import { cache } from "react";
import { configErrorMessage, parseConfig, type Config } from "./config";
import { createConfiguredResolver } from "./create";
import { clientKey, createRateLimiter, type RateDecision } from "./rate-limit";
import type { Resolver } from "./resolver";

type Server = { config: Config; resolver: Resolver; refreshLimiter: (key: string) => RateDecision };

/** Validates the environment (SPEC §8); throws one message naming every bad variable. */
export function loadConfig(): Config {
  const parsed = parseConfig(process.env);
  if (!parsed.ok) throw new Error(configErrorMessage(parsed.errors));
  return parsed.config;
}

const holder = globalThis as typeof globalThis & { __identServer?: Server };

function server(): Server {
  if (!holder.__identServer) {
    const config = loadConfig();
    holder.__identServer = { config, resolver: createConfiguredResolver(config), refreshLimiter: createRateLimiter({ limit: 5, windowMs: 60_000 }) };
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
