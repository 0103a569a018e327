/**
 * The Node entry of the `ident-resolver` package (docs/library.md): `createResolver` with the guarded
 * fetcher (address guard, the protocol's deadline and size cap, connect-to for tests) and the app's
 * `IDENT_*` variables for what is not given; the fetchers themselves, and the fetch thread.
 */
import { readFileSync } from "node:fs";
import { configErrorMessage, parseConfig } from "./config.ts";
import type { ConnectToEntry } from "./fetch/connect-to.ts";
import { parseConnectTo } from "./fetch/connect-to.ts";
import { createFetcher, type FetcherOptions } from "./fetch/fetcher.ts";
import type { Fetcher } from "./fetch/outcome.ts";
import { createPortableFetcher, type PortableFetcherOptions } from "./fetch/portable.ts";
import { runtime } from "./fetch/runtime.ts";
import { fetcherFromFetch } from "./fetch/web-fetch.ts";
import { resolverOver, type IdentResolver, type ResolverOptions } from "./library.ts";
import { extend } from "./objects.ts";
import { USER_AGENT } from "./version.ts";

export type NodeResolverOptions = ResolverOptions & {
  /** Where to dial instead, as `IDENT_CONNECT_TO` says it (`host:port:connect-host:connect-port`, comma-separated). */
  connectTo?: string | readonly ConnectToEntry[];
  /** Extra trusted CA certificates (PEM). @default the file NODE_EXTRA_CA_CERTS names, where the runtime does not read it itself */
  ca?: readonly string[];
  /** The variables read for what is not given. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
};

/**
 * The guarded fetcher for this runtime (docs/library.md#runtimes): undici's on Node, where its guard
 * holds and it keeps the app's limits; elsewhere the one over `node:https`, whose guard holds there.
 */
export function guardedFetcher(options: PortableFetcherOptions & Pick<FetcherOptions, "hostAtOnce" | "addressAtOnce">): Fetcher {
  if (runtime() === "node") return createFetcher(options);
  // It fetches one document at a time per call, without the per-host and per-address queues.
  return createPortableFetcher(options);
}

/** `connectTo` as entries, from the option or else `IDENT_CONNECT_TO`. */
function connectEntries(option: NodeResolverOptions["connectTo"], fromEnv: readonly ConnectToEntry[]): readonly ConnectToEntry[] {
  if (option === undefined) return fromEnv;
  if (typeof option !== "string") return option;
  const parsed = parseConnectTo(option);
  if (!parsed.ok) throw new TypeError(`connectTo: ${parsed.message}`);
  return parsed.entries;
}

/**
 * A resolver for a server (docs/library.md): the guarded fetcher unless `fetch` is given, and the
 * app's defaults and `IDENT_*` variables for every option not given. Throws on a bad variable, as
 * the app refuses to start on one.
 */
export function createResolver(options: NodeResolverOptions = {}): IdentResolver {
  const parsed = parseConfig(options.env ?? process.env);
  if (!parsed.ok) throw new TypeError(configErrorMessage(parsed.errors));
  const config = parsed.config;
  const timeoutMs = options.fetchTimeoutMs ?? config.fetchTimeoutMs;
  const userAgent = options.userAgent ?? USER_AGENT;
  const connectTo = connectEntries(options.connectTo, config.connectTo);
  // Node reads NODE_EXTRA_CA_CERTS itself at start; Deno does not.
  const ca = options.ca ?? (runtime() === "deno" && config.extraCaCerts ? [readFileSync(config.extraCaCerts, "utf8")] : undefined);
  const guarded = { timeoutMs, connectTo, userAgent, ...(ca ? { ca } : {}) };
  const fetcher = options.fetch
    ? fetcherFromFetch(options.fetch, { timeoutMs, userAgent })
    : guardedFetcher(Object.assign(guarded, { hostAtOnce: config.traffic.hostAtOnce, addressAtOnce: config.traffic.addressAtOnce }));
  return resolverOver(
    fetcher,
    extend(options, {
      fetchTimeoutMs: timeoutMs,
      cacheFreshS: options.cacheFreshS ?? config.cacheFreshS,
      cacheTtlS: options.cacheTtlS ?? config.cacheTtlS,
      limits: Object.assign(
        { maxClaims: config.maxClaims, maxConnections: config.maxConnections, maxFetchesPerQuery: config.traffic.fetchesPerQuery },
        options.limits,
      ),
    }),
  );
}

export { createPortableFetcher, type PortableFetcherOptions } from "./fetch/portable.ts";
export { runtime, type Runtime } from "./fetch/runtime.ts";
export { createFetcher, type FetcherOptions, type SocketStats } from "./fetch/fetcher.ts";
export type { Fetcher, FetchMode, FetchOptions, FetchOutcome } from "./fetch/outcome.ts";
export { isPublicAddress, BlockedAddressError } from "./fetch/guard.ts";
export { matchConnectTo, parseConnectTo, type ConnectToEntry, type ConnectToParse } from "./fetch/connect-to.ts";
export {
  createThreadedFetcher,
  startFetchWorker,
  type FromThread,
  type ThreadedFetcher,
  type ThreadSettings,
  type ToThread,
} from "./fetch/thread.ts";
