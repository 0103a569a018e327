import { existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { parseConnectTo, type ConnectToEntry } from "./fetch/connect-to.ts";
import { DEFAULTS } from "./limits.ts";
import { isDomain } from "./protocol/ids.ts";
import type { StoreLocation } from "./store/db.ts";
import { LIMIT_NAMES, LIMITS, trafficSettings, type LimitDeclaration, type LimitName, type TrafficSettings } from "./traffic/limits.ts";

/**
 * The configuration (docs/decisions.md#configuration), read only from environment variables: each
 * variable's parser, range and default stand together in one declaration, and every bad value is
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

/** Each variable with its schema (parser, range, default): the one place it is declared. */
function declared<const N extends string, S extends z.ZodType>(name: N, schema: S) {
  return { name, schema };
}

const url = (value: string | undefined) => (value === undefined ? null : URL.parse(value));

/** The URL of a server, of one of `protocols` and with a host; null when unset. */
function serverUrl(protocols: readonly string[], message: string) {
  return variable.transform((value, ctx) => {
    const parsed = url(value);
    if (value === undefined) return null;
    if (parsed && protocols.includes(parsed.protocol) && parsed.hostname) return value;
    ctx.addIssue({ code: "custom", message });
    return z.NEVER;
  });
}

/** What a lookup reads, and how long it waits and keeps what it read. */
function lookupVariables() {
  return {
    connectTo: declared(
      "IDENT_CONNECT_TO",
      z
        .string()
        .optional()
        .transform((value, ctx): ConnectToEntry[] => {
          const parsed = parseConnectTo(value ?? "");
          if (parsed.ok) return parsed.entries;
          ctx.addIssue({ code: "custom", message: parsed.message });
          return z.NEVER;
        }),
    ),
    fetchTimeoutMs: declared("IDENT_FETCH_TIMEOUT_MS", whole(DEFAULTS.fetchTimeoutMs, 100, 60_000)),
    // The protocol bounds staleness at one day.
    cacheTtlS: declared("IDENT_CACHE_TTL_S", whole(DEFAULTS.cacheTtlS, 0, DEFAULTS.cacheTtlS)),
    cacheFreshS: declared("IDENT_CACHE_FRESH_S", whole(DEFAULTS.cacheFreshS, 0, DEFAULTS.cacheTtlS)),
    maxClaims: declared("IDENT_MAX_CLAIMS", whole(DEFAULTS.maxClaims, 1, 1000)),
    maxConnections: declared("IDENT_MAX_CONNECTIONS", whole(DEFAULTS.maxConnections, 0, 100)),
  };
}

/** Where the server listens and is reached, where it keeps the index and what it shares, what it says to operators. */
function serverVariables() {
  return {
    port: declared("PORT", whole(3000, 1, 65_535)),
    trustedHops: declared("IDENT_TRUSTED_HOPS", whole(0, 0, 10)),
    publicUrl: declared(
      "IDENT_PUBLIC_URL",
      variable.transform((value, ctx) => {
        if (value === undefined) return null;
        const parsed = url(value);
        if (parsed && (parsed.protocol === "https:" || parsed.protocol === "http:")) return parsed.origin;
        ctx.addIssue({ code: "custom", message: `${JSON.stringify(value)} must be an http(s) URL` });
        return z.NEVER;
      }),
    ),
    // docs/decisions.md#the-index: the embedded store's folder, or ":memory:" to keep nothing.
    dataDir: declared(
      "IDENT_DATA_DIR",
      variable.transform((value) => (value === ":memory:" ? null : path.resolve(/*turbopackIgnore: true*/ value ?? ".data"))),
    ),
    databaseUrl: declared(
      "IDENT_DATABASE_URL",
      serverUrl(["postgres:", "postgresql:"], "must be a postgres:// URL with a host (postgres://user:password@host:5432/database)"),
    ),
    // docs/deploying.md#redis
    redisUrl: declared("IDENT_REDIS_URL", serverUrl(["redis:", "rediss:"], "must be a redis:// URL with a host (redis://host:6379)")),
    // docs/deploying.md#metrics: the operators' listener, never the public port; `off` for none.
    metricsAddr: declared(
      "IDENT_METRICS_ADDR",
      variable.transform((value, ctx) => {
        if (value === "off") return null;
        const parsed = URL.parse(`http://${value ?? "127.0.0.1:9464"}`);
        const port = Number(parsed?.port);
        if (parsed && parsed.pathname === "/" && !parsed.username && parsed.hostname && port > 0) {
          return { host: parsed.hostname.replace(/^\[(.*)\]$/, "$1"), port };
        }
        ctx.addIssue({ code: "custom", message: "must be host:port (127.0.0.1:9464, [::1]:9464) or off" });
        return z.NEVER;
      }),
    ),
    // docs/deploying.md#logs
    logLevel: declared(
      "IDENT_LOG_LEVEL",
      z.enum(["debug", "info", "warn", "error"], { message: "must be debug, info, warn or error" }).default("info"),
    ),
  };
}

/** Discovery (docs/decisions.md#discovery): whether it runs, where it starts, how wide and how far. */
function discoveryVariables() {
  return {
    crawlOn: declared(
      "IDENT_CRAWL",
      variable.transform((value, ctx) => {
        if (value === undefined || value === "1" || value === "true") return true;
        if (value === "0" || value === "false") return false;
        ctx.addIssue({ code: "custom", message: "must be 1 (on, the default) or 0 (off)" });
        return z.NEVER;
      }),
    ),
    crawlSeeds: declared(
      "IDENT_CRAWL_SEEDS",
      variable.transform((value, ctx) => {
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
    ),
    crawlConcurrency: declared("IDENT_CRAWL_CONCURRENCY", whole(4, 1, 64)),
    crawlMax: declared("IDENT_CRAWL_MAX", whole(100_000, 1, 10_000_000)),
    // docs/notices.md#looking-by-itself: a followed entity is re-checked within this many seconds.
    followS: declared("IDENT_FOLLOW_RECHECK_S", whole(3600, 60, 86_400)),
  };
}

/**
 * The variables, each declared once, keyed by the configuration field it sets, in the order their
 * problems are reported; the configuration's types are inferred from these (`fileExists` is injected
 * so tests need no files). Traffic limits are declared with their limit in lib/traffic/limits.ts, not here.
 */
function variables(fileExists: (path: string) => boolean) {
  return Object.assign(lookupVariables(), serverVariables(), discoveryVariables(), {
    // Read by Node itself at start; checked here so a typo fails loudly.
    extraCaCerts: declared(
      "NODE_EXTRA_CA_CERTS",
      variable.transform((file, ctx) => {
        if (file === undefined) return null;
        if (fileExists(file)) return file;
        ctx.addIssue({ code: "custom", message: `no file at ${file}` });
        return z.NEVER;
      }),
    ),
  });
}

type Variables = ReturnType<typeof variables>;
/** Each variable's value, as its schema parses it. */
type Values = { [K in keyof Variables]: z.output<Variables[K]["schema"]> };

/** What the configuration makes of some variables together (the store, discovery, the public URL, the limits). */
type Derived = {
  /** `IDENT_PUBLIC_URL`, or `http://localhost:{PORT}`. */
  publicUrl: string;
  /**
   * Where the index lives: `IDENT_DATABASE_URL` when set, else the embedded store in `IDENT_DATA_DIR`
   * (null: in memory). @default embedded in .data/
   */
  store: StoreLocation;
  /** Discovery and re-verification (docs/decisions.md#discovery); null with `IDENT_CRAWL=0`. */
  crawl: { seeds: string[]; concurrency: number; max: number } | null;
  /** Every traffic limit's value (docs/architecture.md#traffic), from the variables lib/traffic/limits.ts declares. */
  traffic: TrafficSettings;
};

/** The configuration (docs/decisions.md#configuration). */
export type Config = Omit<Values, "dataDir" | "databaseUrl" | "crawlOn" | "crawlSeeds" | "crawlConcurrency" | "crawlMax" | "publicUrl"> &
  Derived;

export type ConfigParse = { ok: true; config: Config } | { ok: false; errors: string[] };

/** Reads and validates the configuration. Every bad value is reported as `NAME=value: why`. */
export function parseConfig(env: Env, fileExists: (path: string) => boolean = (p) => existsSync(/*turbopackIgnore: true*/ p)): ConfigParse {
  const errors: string[] = [];
  const read = <S extends z.ZodType>(name: string, schema: S): z.output<S> | undefined => {
    const parsed = schema.safeParse(env[name]);
    if (parsed.success) return parsed.data;
    const value = env[name];
    for (const issue of parsed.error.issues)
      errors.push(`${name}${value === undefined ? "" : `=${JSON.stringify(value)}`}: ${issue.message}`);
    return undefined;
  };
  const declarations = variables(fileExists);
  const values = {} as Record<string, unknown>;
  for (const [key, { name, schema }] of Object.entries(declarations)) values[key] = read(name, schema);
  const traffic: Partial<Record<LimitName, number>> = {};
  for (const name of LIMIT_NAMES) {
    const v: LimitDeclaration["variable"] = LIMITS[name].variable;
    if (v) traffic[name] = read(v.name, whole(LIMITS[name].default, v.min, v.max));
  }
  if (errors.length > 0) return { ok: false, errors: [...new Set(errors)] };
  const e = values as Values;
  const { dataDir, databaseUrl, crawlOn, crawlSeeds, crawlConcurrency, crawlMax, publicUrl, ...plain } = e;
  return {
    ok: true,
    config: Object.assign(plain, {
      publicUrl: publicUrl ?? `http://localhost:${e.port}`,
      store: databaseUrl ? { kind: "server" as const, url: databaseUrl } : { kind: "embedded" as const, dataDir },
      crawl: crawlOn ? { seeds: crawlSeeds, concurrency: crawlConcurrency, max: crawlMax } : null,
      traffic: trafficSettings(traffic),
    }),
  };
}

/** One message naming every bad variable, for a start-up failure. */
export function configErrorMessage(errors: readonly string[]): string {
  return `ident-resolver: invalid configuration\n${errors.map((e) => `  - ${e}`).join("\n")}`;
}
