/**
 * What an instance tells an operator, as Prometheus text at /metrics (docs/deploying.md#metrics).
 * One registry per resolver, never prom-client's global one: a process may hold several (the tests do).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { SocketStats } from "./fetch/fetcher.ts";
import type { OutboundView } from "./fetch/thread.ts";
import type { FleetLink } from "./redis.ts";
import type { Store, StoreStats } from "./store/index.ts";

export type Metrics = {
  registry: Registry;
  /** Publisher fetches by outcome (found, not_found, unreachable, timeout, too_large, blocked, refused). */
  fetches: Counter<"outcome">;
  fetchSeconds: Histogram;
  /** Document cache lookups by tier (local, shared) and result (hit, miss). */
  cache: Counter<"tier" | "result">;
  /** Refusals by kind (docs/architecture.md#traffic: `cold_lookups`, `host_budget`, `address_budget`, `busy`, …). */
  refusals: Counter<"limit">;
};

export type MetricSources = {
  outbound: OutboundView;
  /** Outbound sockets open now and at most so far (docs/decisions.md#outbound-work). */
  sockets: () => SocketStats | Promise<SocketStats>;
  store: Promise<Store | null>;
  fleet: FleetLink | null;
};

/** A gauge read when scraped; `read` answers null when it cannot say (the last value stands). */
function gauge(registers: Registry[], name: string, help: string, read: () => number | null | Promise<number | null>) {
  return new Gauge({
    name,
    help,
    registers,
    async collect() {
      const value = await read();
      if (value !== null) this.set(value);
    },
  });
}

/** The outbound gauges: fetches in flight and queued, sockets open and their peak. */
function outboundGauges(registers: Registry[], sources: MetricSources) {
  gauge(
    registers,
    "ident_fetches_in_flight",
    "Publisher fetches holding an outbound slot now",
    async () => (await sources.outbound.stats()).active,
  );
  gauge(
    registers,
    "ident_fetches_queued",
    "Publisher fetches waiting for an outbound slot now",
    async () => (await sources.outbound.stats()).queued,
  );
  gauge(
    registers,
    "ident_outbound_sockets",
    "Outbound sockets open now, from the connection attempt until closed",
    async () => (await sources.sockets()).open,
  );
  gauge(
    registers,
    "ident_outbound_sockets_peak",
    "The most outbound sockets open at once since the instance started",
    async () => (await sources.sockets()).peak,
  );
}

/** The index's gauges: entities, background resolutions due and their lag, results waiting and dropped. */
function storeGauges(registers: Registry[], sources: MetricSources) {
  // One read of the store per scrape, however many gauges ask for it.
  let stats: { at: number; read: Promise<StoreStats | null> } | null = null;
  const storeStats = () => {
    if (!stats || Date.now() - stats.at > 1000) {
      stats = { at: Date.now(), read: sources.store.then((store) => store?.stats().catch(() => null) ?? null) };
    }
    return stats.read;
  };
  gauge(registers, "ident_index_entities", "Entities the index holds", async () => (await storeStats())?.entities ?? null);
  gauge(
    registers,
    "ident_queue_depth",
    "Background resolutions (discovery, re-verification) due now and not taken",
    async () => (await storeStats())?.queueDepth ?? null,
  );
  gauge(
    registers,
    "ident_reverification_lag_seconds",
    "How long the oldest background resolution due has waited",
    async () => (await storeStats())?.lagS ?? null,
  );
  gauge(
    registers,
    "ident_records_waiting",
    "Results waiting to be recorded until the database answers again",
    async () => (await sources.store)?.backlog ?? 0,
  );
  new Counter({
    name: "ident_records_dropped_total",
    help: "Results dropped unrecorded because more were waiting than the store keeps (the oldest first)",
    registers,
    async collect() {
      const dropped = (await sources.store)?.dropped ?? 0;
      this.reset();
      this.inc(dropped);
    },
  });
}

/** The fleet's link to Redis: up or alone, and its failed commands. */
function fleetMetrics(registers: Registry[], fleet: FleetLink) {
  gauge(registers, "ident_redis_up", "1 while this instance shares its cache and limits through Redis, 0 while it works alone", () =>
    fleet.usable() ? 1 : 0,
  );
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

export function createMetrics(sources: MetricSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "ident_process_" });
  const registers = [registry];
  outboundGauges(registers, sources);
  storeGauges(registers, sources);
  if (sources.fleet) fleetMetrics(registers, sources.fleet);
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
