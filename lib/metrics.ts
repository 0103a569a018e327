/**
 * What an instance tells an operator, as Prometheus text at /metrics (docs/deploying.md#metrics).
 * One registry per resolver, never prom-client's global one: a process may hold several (the tests do).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { OutboundGate } from "./fetch/outbound";
import type { FleetLink } from "./fleet/redis";
import type { Store, StoreStats } from "./store";

export type Metrics = {
  registry: Registry;
  /** Publisher fetches by outcome (found, not_found, unreachable, timeout, too_large, blocked, refused). */
  fetches: Counter<"outcome">;
  fetchSeconds: Histogram;
  /** Document cache lookups by tier (local, shared) and result (hit, miss). */
  cache: Counter<"tier" | "result">;
  /** Requests refused by a limit (cold, refresh, host_budget, busy). */
  refusals: Counter<"limit">;
};

export type MetricSources = {
  outbound: OutboundGate;
  store: Promise<Store | null>;
  fleet: FleetLink | null;
};

export function createMetrics(sources: MetricSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "ident_process_" });
  const registers = [registry];
  // One read of the store per scrape, however many gauges ask for it.
  let stats: { at: number; read: Promise<StoreStats | null> } | null = null;
  const storeStats = () => {
    if (!stats || Date.now() - stats.at > 1000) {
      stats = { at: Date.now(), read: sources.store.then((store) => store?.stats().catch(() => null) ?? null) };
    }
    return stats.read;
  };
  new Gauge({
    name: "ident_fetches_in_flight",
    help: "Publisher fetches holding an outbound slot now",
    registers,
    collect() {
      this.set(sources.outbound.stats().active);
    },
  });
  new Gauge({
    name: "ident_fetches_queued",
    help: "Publisher fetches waiting for an outbound slot now",
    registers,
    collect() {
      this.set(sources.outbound.stats().queued);
    },
  });
  new Gauge({
    name: "ident_index_entities",
    help: "Entities the index holds",
    registers,
    async collect() {
      const stats = await storeStats();
      if (stats) this.set(stats.entities);
    },
  });
  new Gauge({
    name: "ident_queue_depth",
    help: "Background resolutions (discovery, re-verification) due now and not taken",
    registers,
    async collect() {
      const stats = await storeStats();
      if (stats) this.set(stats.queueDepth);
    },
  });
  new Gauge({
    name: "ident_reverification_lag_seconds",
    help: "How long the oldest background resolution due has waited",
    registers,
    async collect() {
      const stats = await storeStats();
      if (stats) this.set(stats.lagS);
    },
  });
  new Gauge({
    name: "ident_records_waiting",
    help: "Results waiting to be recorded until the database answers again",
    registers,
    async collect() {
      this.set((await sources.store)?.backlog ?? 0);
    },
  });
  const { fleet } = sources;
  if (fleet) {
    new Gauge({
      name: "ident_redis_up",
      help: "1 while this instance shares its cache and limits through Redis, 0 while it works alone",
      registers,
      collect() {
        this.set(fleet.usable() ? 1 : 0);
      },
    });
    new Counter({
      name: "ident_redis_command_failures_total",
      help: "Redis commands that failed or timed out (each rests the link 2 s)",
      registers,
      collect() {
        this.reset();
        this.inc(fleet.failures);
      },
    });
  }
  return {
    registry,
    fetches: new Counter({ name: "ident_fetches_total", help: "Publisher fetches by outcome", labelNames: ["outcome"], registers }),
    fetchSeconds: new Histogram({
      name: "ident_fetch_duration_seconds",
      help: "How long a publisher fetch took, from its outbound slot to its outcome",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    cache: new Counter({
      name: "ident_cache_lookups_total",
      help: "Document cache lookups by tier and result",
      labelNames: ["tier", "result"],
      registers,
    }),
    refusals: new Counter({ name: "ident_refusals_total", help: "Requests refused by a limit", labelNames: ["limit"], registers }),
  };
}
