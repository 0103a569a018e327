import { existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { parseConnectTo, type ConnectToEntry } from "./fetch/connect-to";
import { DEFAULTS } from "./limits";
import { isDomain } from "./protocol/ids";
import type { StoreLocation } from "./store/db";

/**
 * The configuration (docs/decisions.md#configuration), read only from environment variables, in one
 * zod schema: each variable's parser, range and default stand together, and every bad value is
 * reported with its name, not only the first.
 */

type Env = Readonly<Record<string, string | undefined>>;

/** A variable that may be unset; blank counts as unset. */
const variable = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));

/** A whole number from `min` to `max`, or `fallback` when unset. */
function whole(fallback: number, min: number, max: number) {
  const Range = z.coerce.number().int().min(min).max(max);
  return variable.transform((raw, ctx) => {
    if (raw === undefined) return fallback;
    const n = Range.safeParse(/^-?\d+$/.test(raw) ? raw : NaN);
    if (n.success) return n.data;
    ctx.addIssue({ code: "custom", message: `must be a whole number from ${min} to ${max}` });
    return z.NEVER;
  });
}

/** The schema of the environment; `fileExists` is injected so tests need no files. */
function envSchema(fileExists: (path: string) => boolean) {
  return z.object({
    IDENT_CONNECT_TO: z
      .string()
      .optional()
      .transform((value, ctx): ConnectToEntry[] => {
        const parsed = parseConnectTo(value ?? "");
        if (parsed.ok) return parsed.entries;
        ctx.addIssue({ code: "custom", message: parsed.message });
        return z.NEVER;
      }),
    IDENT_FETCH_TIMEOUT_MS: whole(DEFAULTS.fetchTimeoutMs, 100, 60_000),
    // The protocol bounds staleness at one day.
    IDENT_CACHE_TTL_S: whole(DEFAULTS.cacheTtlS, 0, DEFAULTS.cacheTtlS),
    IDENT_CACHE_FRESH_S: whole(DEFAULTS.cacheFreshS, 0, DEFAULTS.cacheTtlS),
    IDENT_MAX_CLAIMS: whole(DEFAULTS.maxClaims, 1, 1000),
    IDENT_MAX_CONNECTIONS: whole(DEFAULTS.maxConnections, 0, 100),
    // A query's own documents (at most two, with the HTML fallback) always fit.
    IDENT_MAX_FETCHES_PER_QUERY: whole(DEFAULTS.maxFetchesPerQuery, 10, 100_000),
    IDENT_MAX_OUTBOUND: whole(DEFAULTS.maxOutbound, 1, 10_000),
    IDENT_COLD_LOOKUPS_PER_MIN: whole(DEFAULTS.coldLookupsPerMin, 1, 1_000_000),
    IDENT_HOST_BUDGET_PER_MIN: whole(DEFAULTS.hostBudgetPerMin, 1, 1_000_000),
    PORT: whole(3000, 1, 65_535),
    IDENT_TRUSTED_HOPS: whole(0, 0, 10),
    IDENT_PUBLIC_URL: variable.transform((value, ctx) => {
      if (value === undefined) return null;
      const url = URL.canParse(value) ? new URL(value) : null;
      if (url && (url.protocol === "https:" || url.protocol === "http:")) return url.origin;
      ctx.addIssue({ code: "custom", message: `${JSON.stringify(value)} must be an http(s) URL` });
      return z.NEVER;
    }),
    // docs/decisions.md#the-index: the embedded store's folder, or ":memory:" to keep nothing.
    IDENT_DATA_DIR: variable.transform((value) => (value === ":memory:" ? null : path.resolve(/*turbopackIgnore: true*/ value ?? ".data"))),
    IDENT_DATABASE_URL: variable.transform((value, ctx) => {
      if (value === undefined) return null;
      const url = URL.parse(value);
      if (url && (url.protocol === "postgres:" || url.protocol === "postgresql:") && url.hostname) return value;
      ctx.addIssue({ code: "custom", message: "must be a postgres:// URL with a host (postgres://user:password@host:5432/database)" });
      return z.NEVER;
    }),
    // docs/deploying.md#redis
    IDENT_REDIS_URL: variable.transform((value, ctx) => {
      if (value === undefined) return null;
      const url = URL.parse(value);
      if (url && (url.protocol === "redis:" || url.protocol === "rediss:") && url.hostname) return value;
      ctx.addIssue({ code: "custom", message: "must be a redis:// URL with a host (redis://host:6379)" });
      return z.NEVER;
    }),
    // docs/deploying.md#logs
    IDENT_LOG_LEVEL: z.enum(["debug", "info", "warn", "error"], { message: "must be debug, info, warn or error" }).default("info"),
    // docs/decisions.md#discovery
    IDENT_CRAWL: variable.transform((value, ctx) => {
      if (value === undefined || value === "1" || value === "true") return true;
      if (value === "0" || value === "false") return false;
      ctx.addIssue({ code: "custom", message: "must be 1 (on, the default) or 0 (off)" });
      return z.NEVER;
    }),
    IDENT_CRAWL_SEEDS: variable.transform((value, ctx) => {
      const seeds = (value ?? "")
        .split(",")
        .map((d) => d.trim())
        .filter(Boolean);
      const bad = seeds.filter((d) => !isDomain(d));
      if (bad.length === 0) return [...new Set(seeds.map((d) => d.toLowerCase()))];
      ctx.addIssue({
        code: "custom",
        message: `must be domains separated by commas; not a domain: ${bad.map((b) => JSON.stringify(b)).join(", ")}`,
      });
      return z.NEVER;
    }),
    IDENT_CRAWL_CONCURRENCY: whole(4, 1, 64),
    IDENT_CRAWL_MAX: whole(100_000, 1, 10_000_000),
    // Read by Node itself at start; checked here so a typo fails loudly.
    NODE_EXTRA_CA_CERTS: variable.transform((path, ctx) => {
      if (path === undefined) return null;
      if (fileExists(path)) return path;
      ctx.addIssue({ code: "custom", message: `no file at ${path}` });
      return z.NEVER;
    }),
  });
}

export type Config = {
  connectTo: ConnectToEntry[];
  /** `IDENT_FETCH_TIMEOUT_MS`. @default 10000 */
  fetchTimeoutMs: number;
  /** `IDENT_CACHE_TTL_S`: the longest a cached document is used. @default 86400 */
  cacheTtlS: number;
  /** `IDENT_CACHE_FRESH_S`: how long a found document is served without a refresh. @default 3600 */
  cacheFreshS: number;
  /** `IDENT_MAX_CLAIMS`. @default 50 */
  maxClaims: number;
  /** `IDENT_MAX_CONNECTIONS`. @default 10 */
  maxConnections: number;
  /** `IDENT_MAX_FETCHES_PER_QUERY`: fetches one query may start. @default 300 */
  maxFetchesPerQuery: number;
  /** `IDENT_MAX_OUTBOUND`: fetches in flight per instance. @default 64 */
  maxOutbound: number;
  /** `IDENT_COLD_LOOKUPS_PER_MIN`: lookups that start a fetch, per client. @default 30 */
  coldLookupsPerMin: number;
  /** `IDENT_HOST_BUDGET_PER_MIN`: requests to one host, all clients together. @default 300 */
  hostBudgetPerMin: number;
  /** `PORT`. @default 3000 */
  port: number;
  /** `IDENT_PUBLIC_URL`: the app's public origin, for canonical and OpenGraph URLs. @default http://localhost:{PORT} */
  publicUrl: string;
  /** `IDENT_TRUSTED_HOPS`: proxies in front of the app whose X-Forwarded-For entries are trusted. @default 0 */
  trustedHops: number;
  /** `NODE_EXTRA_CA_CERTS`. */
  extraCaCerts: string | null;
  /**
   * Where the index lives: `IDENT_DATABASE_URL` when set, else the embedded store in `IDENT_DATA_DIR`
   * (null: in memory). @default embedded in .data/
   */
  store: StoreLocation;
  /** `IDENT_REDIS_URL`: the fleet's shared cache and limits (docs/deploying.md#redis); null for one instance alone. */
  redisUrl: string | null;
  /** `IDENT_LOG_LEVEL`: the least severe log line written. @default info */
  logLevel: "debug" | "info" | "warn" | "error";
  /** Discovery and re-verification (docs/decisions.md#discovery); null with `IDENT_CRAWL=0`. */
  crawl: {
    /** `IDENT_CRAWL_SEEDS`: domains queued at start. @default none */
    seeds: string[];
    /** `IDENT_CRAWL_CONCURRENCY`: background resolutions at once. @default 4 */
    concurrency: number;
    /** `IDENT_CRAWL_MAX`: domains the queue holds at most. @default 100000 */
    max: number;
  } | null;
};

export type ConfigParse = { ok: true; config: Config } | { ok: false; errors: string[] };

/** Reads and validates the configuration. Every bad value is reported as `NAME=value: why`. */
export function parseConfig(env: Env, fileExists: (path: string) => boolean = (p) => existsSync(/*turbopackIgnore: true*/ p)): ConfigParse {
  const parsed = envSchema(fileExists).safeParse(env);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? "");
      const value = env[name];
      return `${name}${value === undefined ? "" : `=${JSON.stringify(value)}`}: ${issue.message}`;
    });
    return { ok: false, errors: [...new Set(errors)] };
  }
  const e = parsed.data;
  return {
    ok: true,
    config: {
      connectTo: e.IDENT_CONNECT_TO,
      fetchTimeoutMs: e.IDENT_FETCH_TIMEOUT_MS,
      cacheTtlS: e.IDENT_CACHE_TTL_S,
      cacheFreshS: e.IDENT_CACHE_FRESH_S,
      maxClaims: e.IDENT_MAX_CLAIMS,
      maxConnections: e.IDENT_MAX_CONNECTIONS,
      maxFetchesPerQuery: e.IDENT_MAX_FETCHES_PER_QUERY,
      maxOutbound: e.IDENT_MAX_OUTBOUND,
      coldLookupsPerMin: e.IDENT_COLD_LOOKUPS_PER_MIN,
      hostBudgetPerMin: e.IDENT_HOST_BUDGET_PER_MIN,
      port: e.PORT,
      publicUrl: e.IDENT_PUBLIC_URL ?? `http://localhost:${e.PORT}`,
      trustedHops: e.IDENT_TRUSTED_HOPS,
      extraCaCerts: e.NODE_EXTRA_CA_CERTS,
      store: e.IDENT_DATABASE_URL ? { kind: "server", url: e.IDENT_DATABASE_URL } : { kind: "embedded", dataDir: e.IDENT_DATA_DIR },
      redisUrl: e.IDENT_REDIS_URL,
      logLevel: e.IDENT_LOG_LEVEL,
      crawl: e.IDENT_CRAWL ? { seeds: e.IDENT_CRAWL_SEEDS, concurrency: e.IDENT_CRAWL_CONCURRENCY, max: e.IDENT_CRAWL_MAX } : null,
    },
  };
}

/** One message naming every bad variable, for a start-up failure. */
export function configErrorMessage(errors: readonly string[]): string {
  return `ident-resolver: invalid configuration\n${errors.map((e) => `  - ${e}`).join("\n")}`;
}
