import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.ts";
import { trafficSettings } from "./traffic/limits.ts";

describe("configuration (docs/decisions.md#configuration)", () => {
  it("defaults", () => {
    expect(parseConfig({})).toEqual({
      ok: true,
      config: {
        connectTo: [],
        fetchTimeoutMs: 10_000,
        cacheTtlS: 86_400,
        cacheFreshS: 3600,
        maxClaims: 50,
        maxConnections: 10,
        port: 3000,
        trustedHops: 0,
        publicUrl: "http://localhost:3000",
        extraCaCerts: null,
        store: { kind: "embedded", dataDir: path.resolve(".data") },
        redisUrl: null,
        logLevel: "info",
        metricsAddr: { host: "127.0.0.1", port: 9464 },
        crawl: { seeds: [], concurrency: 4, max: 100_000 },
        followS: 3600,
        traffic: trafficSettings(),
      },
    });
  });
  it("discovery: IDENT_CRAWL=0 turns it off; seeds are domains, lower-cased, each once; bad values are named", () => {
    const crawl = (env: Record<string, string>) => {
      const parsed = parseConfig(env);
      return parsed.ok ? parsed.config.crawl : parsed.errors;
    };
    expect(crawl({ IDENT_CRAWL: "0" })).toBeNull();
    expect(
      crawl({ IDENT_CRAWL_SEEDS: " Alice.example, acme.example,,alice.example ", IDENT_CRAWL_CONCURRENCY: "2", IDENT_CRAWL_MAX: "50" }),
    ).toEqual({
      seeds: ["alice.example", "acme.example"],
      concurrency: 2,
      max: 50,
    });
    const errors = crawl({ IDENT_CRAWL: "maybe", IDENT_CRAWL_SEEDS: "alice.example,not a domain", IDENT_CRAWL_CONCURRENCY: "0" });
    expect(errors).toEqual([
      expect.stringContaining("IDENT_CRAWL"),
      expect.stringContaining('not a domain: "not a domain"'),
      expect.stringContaining("IDENT_CRAWL_CONCURRENCY"),
    ]);
  });
  it('the index: IDENT_DATA_DIR (":memory:" keeps nothing), IDENT_DATABASE_URL before it, a bad URL named', () => {
    const store = (env: Record<string, string>) => {
      const parsed = parseConfig(env);
      return parsed.ok ? parsed.config.store : parsed.errors;
    };
    expect(store({ IDENT_DATA_DIR: "/var/lib/ident" })).toEqual({ kind: "embedded", dataDir: "/var/lib/ident" });
    expect(store({ IDENT_DATA_DIR: ":memory:" })).toEqual({ kind: "embedded", dataDir: null });
    expect(store({ IDENT_DATA_DIR: "/x", IDENT_DATABASE_URL: "postgres://u:p@db:5432/ident" })).toEqual({
      kind: "server",
      url: "postgres://u:p@db:5432/ident",
    });
    expect(store({ IDENT_DATABASE_URL: "postgresql://db/ident" })).toEqual({ kind: "server", url: "postgresql://db/ident" });
    for (const bad of ["mysql://db/x", "not a url", "postgres:///nohost"]) {
      expect(store({ IDENT_DATABASE_URL: bad })).toEqual([
        expect.stringMatching(/^IDENT_DATABASE_URL=.*must be a postgres:\/\/ URL with a host/),
      ]);
    }
  });
  it("the fleet: IDENT_REDIS_URL and IDENT_LOG_LEVEL, bad values named", () => {
    const read = (env: Record<string, string>) => {
      const parsed = parseConfig(env);
      return parsed.ok ? { redisUrl: parsed.config.redisUrl, logLevel: parsed.config.logLevel } : parsed.errors;
    };
    expect(read({ IDENT_REDIS_URL: "redis://cache:6379/2", IDENT_LOG_LEVEL: "warn" })).toEqual({
      redisUrl: "redis://cache:6379/2",
      logLevel: "warn",
    });
    expect(read({ IDENT_REDIS_URL: "rediss://cache" })).toEqual({ redisUrl: "rediss://cache", logLevel: "info" });
    for (const bad of ["http://cache", "cache:6379", "redis:///nohost"]) {
      expect(read({ IDENT_REDIS_URL: bad })).toEqual([expect.stringMatching(/^IDENT_REDIS_URL=.*must be a redis:\/\/ URL with a host/)]);
    }
    expect(read({ IDENT_LOG_LEVEL: "verbose" })).toEqual([
      expect.stringMatching(/^IDENT_LOG_LEVEL="verbose": must be debug, info, warn or error/),
    ]);
  });
  it("IDENT_METRICS_ADDR: host:port (IPv6 in brackets) or off; anything else named", () => {
    const read = (value: string) => {
      const parsed = parseConfig({ IDENT_METRICS_ADDR: value });
      return parsed.ok ? parsed.config.metricsAddr : parsed.errors;
    };
    expect(read("0.0.0.0:9100")).toEqual({ host: "0.0.0.0", port: 9100 });
    expect(read("[::1]:9464")).toEqual({ host: "::1", port: 9464 });
    expect(read("metrics.internal:9464")).toEqual({ host: "metrics.internal", port: 9464 });
    expect(read("off")).toBeNull();
    for (const bad of ["9464", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:99999", "http://x:1", "a:1/metrics", "u@h:1"]) {
      expect(read(bad), bad).toEqual([
        expect.stringMatching(/^IDENT_METRICS_ADDR=.*must be host:port \(127\.0\.0\.1:9464, \[::1\]:9464\) or off/),
      ]);
    }
  });
  it("reads every variable", () => {
    const parsed = parseConfig(
      {
        IDENT_CONNECT_TO: "::127.0.0.1:8443",
        IDENT_FETCH_TIMEOUT_MS: "500",
        IDENT_CACHE_TTL_S: "60",
        IDENT_MAX_CLAIMS: "5",
        IDENT_MAX_CONNECTIONS: "0",
        IDENT_MAX_FETCHES_PER_QUERY: "40",
        IDENT_MAX_OUTBOUND: "8",
        IDENT_COLD_LOOKUPS_PER_MIN: "2",
        IDENT_HOST_BUDGET_PER_MIN: "20",
        IDENT_ADDRESS_BUDGET_PER_MIN: "100",
        PORT: "8080",
        NODE_EXTRA_CA_CERTS: "/ca.pem",
      },
      () => true,
    );
    expect(parsed).toMatchObject({
      ok: true,
      config: {
        fetchTimeoutMs: 500,
        cacheTtlS: 60,
        maxClaims: 5,
        maxConnections: 0,
        port: 8080,
        extraCaCerts: "/ca.pem",
        // The limits the variables set, and those derived from them (docs/architecture.md#traffic).
        traffic: {
          fetchesPerQuery: 40,
          outbound: 8,
          outboundQueue: 32,
          lookupsInInstance: 40,
          requestsInInstance: 64,
          coldLookups: 2,
          lookupsInProgress: 8,
          hostPerMinute: 20,
          addressPerMinute: 100,
          addressSharePerMinute: 25,
        },
      },
    });
  });
  it("reports every bad value with its name", () => {
    const parsed = parseConfig(
      {
        IDENT_CONNECT_TO: "nonsense",
        IDENT_FETCH_TIMEOUT_MS: "10s",
        IDENT_CACHE_TTL_S: "90000",
        IDENT_MAX_CLAIMS: "-1",
        IDENT_MAX_FETCHES_PER_QUERY: "5",
        IDENT_MAX_OUTBOUND: "0",
        IDENT_COLD_LOOKUPS_PER_MIN: "many",
        IDENT_HOST_BUDGET_PER_MIN: "1.5",
        PORT: "99999",
        NODE_EXTRA_CA_CERTS: "/nope.pem",
      },
      () => false,
    );
    expect(parsed.ok).toBe(false);
    const errors = parsed.ok ? [] : parsed.errors;
    for (const name of [
      "IDENT_CONNECT_TO",
      "IDENT_FETCH_TIMEOUT_MS",
      "IDENT_CACHE_TTL_S",
      "IDENT_MAX_CLAIMS",
      "IDENT_MAX_FETCHES_PER_QUERY",
      "IDENT_MAX_OUTBOUND",
      "IDENT_COLD_LOOKUPS_PER_MIN",
      "IDENT_HOST_BUDGET_PER_MIN",
      "PORT",
      "NODE_EXTRA_CA_CERTS",
    ]) {
      expect(errors.some((e) => e.startsWith(name))).toBe(true);
    }
  });
});

describe("configuration messages", () => {
  it("name the variable, its value and the range, once each", () => {
    const parsed = parseConfig({ IDENT_MAX_CLAIMS: "lots", IDENT_PUBLIC_URL: "ftp://x.example" });
    expect(parsed).toEqual({
      ok: false,
      errors: [
        'IDENT_MAX_CLAIMS="lots": must be a whole number from 1 to 1000',
        'IDENT_PUBLIC_URL="ftp://x.example": "ftp://x.example" must be an http(s) URL',
      ],
    });
  });
  it("take blank values as unset", () => {
    expect(parseConfig({ IDENT_MAX_CLAIMS: " ", NODE_EXTRA_CA_CERTS: "", IDENT_PUBLIC_URL: "" })).toMatchObject({
      ok: true,
      config: { maxClaims: 50, extraCaCerts: null },
    });
  });
});
