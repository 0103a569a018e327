import { existsSync } from "node:fs";
import { parseConnectTo, type ConnectToEntry } from "./fetch/connect-to";

/** The configuration of SPEC §8, read only from environment variables. */
export type Config = {
  connectTo: ConnectToEntry[];
  /** `IDENT_FETCH_TIMEOUT_MS`. @default 10000 */
  fetchTimeoutMs: number;
  /** `IDENT_CACHE_TTL_S`: the longest a cached document is used. @default 86400 */
  cacheTtlS: number;
  /** `IDENT_CACHE_FRESH_S`: how long a found document is served without a refresh (SPEC §9: 1 hour). @default 3600 */
  cacheFreshS: number;
  /** `IDENT_MAX_CLAIMS`. @default 50 */
  maxClaims: number;
  /** `IDENT_MAX_CONNECTIONS`. @default 10 */
  maxConnections: number;
  /** `PORT`. @default 3000 */
  port: number;
  /** `IDENT_PUBLIC_URL`: the app's public origin, for canonical and OpenGraph URLs. @default http://localhost:{PORT} */
  publicUrl: string;
  /** `IDENT_TRUSTED_HOPS`: proxies in front of the app whose X-Forwarded-For entries are trusted. @default 0 */
  trustedHops: number;
  /** `NODE_EXTRA_CA_CERTS`, read by Node itself at start; checked here so a typo fails loudly. */
  extraCaCerts: string | null;
};

export type ConfigParse = { ok: true; config: Config } | { ok: false; errors: string[] };

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number, max: number, errors: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    errors.push(`${name}=${JSON.stringify(raw)} must be a whole number from ${min} to ${max}`);
    return fallback;
  }
  return n;
}

/**
 * Reads and validates the configuration (SPEC §8). Every bad value is reported, not only the first.
 * The cache TTL cannot pass one day: the seed's bound on staleness (seed §8).
 */
export function parseConfig(env: Env, fileExists: (path: string) => boolean = (p) => existsSync(/*turbopackIgnore: true*/ p)): ConfigParse {
  const errors: string[] = [];
  const connectTo = parseConnectTo(env.IDENT_CONNECT_TO ?? "");
  if (!connectTo.ok) errors.push(`IDENT_CONNECT_TO: ${connectTo.message}`);
  const extraCaCerts = env.NODE_EXTRA_CA_CERTS?.trim() || null;
  if (extraCaCerts && !fileExists(extraCaCerts)) errors.push(`NODE_EXTRA_CA_CERTS: no file at ${extraCaCerts}`);
  const config: Config = {
    connectTo: connectTo.ok ? connectTo.entries : [],
    fetchTimeoutMs: integer(env, "IDENT_FETCH_TIMEOUT_MS", 10_000, 100, 60_000, errors),
    cacheTtlS: integer(env, "IDENT_CACHE_TTL_S", 86_400, 0, 86_400, errors),
    cacheFreshS: integer(env, "IDENT_CACHE_FRESH_S", 3600, 0, 86_400, errors),
    maxClaims: integer(env, "IDENT_MAX_CLAIMS", 50, 1, 1000, errors),
    maxConnections: integer(env, "IDENT_MAX_CONNECTIONS", 10, 0, 100, errors),
    port: integer(env, "PORT", 3000, 1, 65_535, errors),
    trustedHops: integer(env, "IDENT_TRUSTED_HOPS", 0, 0, 10, errors),
    publicUrl: "",
    extraCaCerts,
  };
  const publicUrl = env.IDENT_PUBLIC_URL?.trim() || `http://localhost:${config.port}`;
  let origin: URL | null = null;
  try {
    origin = new URL(publicUrl);
  } catch {
    origin = null;
  }
  if (!origin || (origin.protocol !== "https:" && origin.protocol !== "http:")) errors.push(`IDENT_PUBLIC_URL=${JSON.stringify(publicUrl)} must be an http(s) URL`);
  else config.publicUrl = origin.origin;
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config };
}

/** One message naming every bad variable, for a start-up failure. */
export function configErrorMessage(errors: readonly string[]): string {
  return `ident-resolver: invalid configuration\n${errors.map((e) => `  - ${e}`).join("\n")}`;
}
