/**
 * Several instances, one Redis, one PostgreSQL (docs/deploying.md): real redis-server and postgres
 * from Debian's binaries on loopback, two resolvers built exactly as two server processes build
 * theirs (lib/setup.ts), over the sample network. One publisher request per URL for the fleet, the
 * index shared, each background job run once, the limits counted for the fleet; Redis and
 * PostgreSQL stopped in the middle of a run and started again.
 */
import { foundJson } from "../helpers/outcomes";
import { answered } from "../helpers/answered";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "ident-resolver/setup";
import { startCrawler } from "ident-resolver/discovery";
import { cacheKey } from "ident-resolver";
import type { FetchOutcome } from "ident-resolver/node";
import { connectRedis } from "ident-resolver/redis";
import { createSharedDocuments } from "ident-resolver/redis";
import type { EntityResult } from "ident-resolver";
import { createConfiguredResolver, openConfiguredStore, type ConfiguredResolver } from "ident-resolver/setup";
import type { Store } from "ident-resolver/store";
import { queueStats } from "ident-resolver/store";
import { startPostgres, type PostgresServer } from "../helpers/postgres";
import { startRedis, type RedisServer } from "../helpers/redis";
import { useSampleNetwork } from "../helpers/sample";

const ctx = useSampleNetwork();
let redis: RedisServer;
let postgres: PostgresServer;
let n = 0;
const open: ConfiguredResolver[] = [];
const logged: string[] = [];

beforeAll(async () => {
  [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
}, 60_000);
afterAll(async () => {
  await Promise.all(open.map((r) => r.close()));
  await redis?.stop();
  await postgres?.stop();
});
afterEach(async () => {
  // Each test starts from an empty shared cache and fresh limits.
  const client = new Redis(redis.url, { lazyConnect: true });
  await client.connect();
  await client.flushall();
  client.disconnect();
});

/** One instance, configured as a server process would be from these variables; with `threaded`, fetching on its thread as the server does. */
function instance(
  env: Record<string, string> = {},
  store: Promise<Store | null> = Promise.resolve(null),
  threaded = false,
): ConfiguredResolver {
  const parsed = parseConfig({ IDENT_CONNECT_TO: ctx.net.connectTo, IDENT_REDIS_URL: redis.url, IDENT_CRAWL: "0", ...env });
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  const resolver = createConfiguredResolver(parsed.config, {
    ca: [ctx.net.caPem],
    store,
    log: (line) => logged.push(line),
    fetchThread: threaded ? { bundled: false } : false,
  });
  open.push(resolver);
  return resolver;
}

/** Two instances sharing Redis and, when given, one database (each with its own connection, as two processes). */
async function fleet(env: Record<string, string> = {}, database?: string) {
  const storeOf = () => {
    if (!database) return undefined;
    const parsed = parseConfig({ IDENT_DATABASE_URL: database, IDENT_CRAWL: "0" });
    if (!parsed.ok) throw new Error(parsed.errors.join("; "));
    return openConfiguredStore(parsed.config, (line) => logged.push(line));
  };
  const a = instance(env, storeOf());
  const b = instance(env, storeOf());
  await Promise.all([ready(a), ready(b)]);
  return { a, b };
}

/** Waits until the instance's link to Redis is up. */
async function ready(r: ConfiguredResolver, ms = 10_000) {
  const until = Date.now() + ms;
  while (!r.fleet?.usable()) {
    if (Date.now() > until) throw new Error("Redis did not become usable");
    await new Promise((res) => setTimeout(res, 25));
  }
}

const publisherRequests = () => [...ctx.net.requests.values()].reduce((a, b) => a + b, 0);
const fetchedTwice = () => [...ctx.net.requests].filter(([, count]) => count > 1);

describe("one cache for the fleet", () => {
  it("20 concurrent cold lookups of one domain spread over two instances make one publisher request per URL", async () => {
    const { a, b } = await fleet();
    ctx.net.resetCounts();
    const results = (await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).resolveEntity("acme.example")))).map(answered);
    expect(results.every((r) => r.entity.status === "accepted")).toBe(true);
    expect(publisherRequests()).toBeGreaterThan(3);
    expect(fetchedTwice(), logged.join("\n")).toEqual([]);
    // Each URL fetched by one instance only: the fetches both count add up to the requests made.
    const fetches = async (r: ConfiguredResolver) => {
      const text = await r.metrics.registry.metrics();
      return ["found", "not_found", "unreachable", "timeout", "too_large", "blocked"].reduce(
        (sum, outcome) => sum + metric(text, "ident_fetches_total", { outcome }),
        0,
      );
    };
    expect((await fetches(a)) + (await fetches(b))).toBe(publisherRequests());
  });

  it("two lookups on one instance both miss; the second reaches the lock after the first's fetch and takes its outcome", async () => {
    const link = connectRedis(redis.url, { log: (line) => logged.push(line) });
    try {
      while (!link.usable()) await new Promise((r) => setTimeout(r, 25));
      const shared = createSharedDocuments(link, { maxAgeMs: 60_000, failureMs: 60_000, fetchTimeoutMs: 2000 });
      const url = "https://twice.example/ident.json";
      let fetched = 0;
      const publisher = async (): Promise<FetchOutcome> => {
        fetched++;
        return foundJson(url, `{"n":${fetched}}`);
      };
      const fetch = shared.singleFlight(publisher);
      const key = cacheKey(url, "json");
      expect(await shared.read(key)).toBeUndefined();
      expect(await shared.read(key)).toBeUndefined();
      const first = await fetch(url, "json");
      // Answered the first's outcome, it fetches nothing.
      const second = await fetch(url, "json");
      expect(fetched).toBe(1);
      expect(second).toEqual(first);
      // A fetch asked without a miss (a refresh) wants one that starts after it: it fetches.
      const unrelated = createSharedDocuments(link, { maxAgeMs: 60_000, failureMs: 60_000, fetchTimeoutMs: 2000 });
      await unrelated.singleFlight(publisher)(url, "json");
      expect(fetched).toBe(2);
    } finally {
      await link.close();
    }
  });

  it("a document one instance fetched is read by another from Redis, not fetched again", async () => {
    const { a, b } = await fleet();
    answered(await a.resolveEntity("alice.example", { refresh: true }));
    ctx.net.resetCounts();
    const fromB = answered(await b.resolveEntity("alice.example"));
    expect(fromB.entity.status).toBe("accepted");
    expect(publisherRequests()).toBe(0);
    expect(metric(await b.metrics.registry.metrics(), "ident_cache_lookups_total", { tier: "shared", result: "hit" })).toBeGreaterThan(0);
  });

  it("a refresh asked on both instances at once is one request per URL", async () => {
    const { a, b } = await fleet();
    answered(await a.resolveEntity("bob.example"));
    ctx.net.resetCounts();
    (await Promise.all([a.resolveEntity("bob.example", { refresh: true }), b.resolveEntity("bob.example", { refresh: true })])).map(
      answered,
    );
    expect(ctx.net.requests.get("bob.example/ident.json")).toBe(1);
  });
});

describe("limits held for the fleet", () => {
  it("a client's cold lookups are counted across instances", async () => {
    const { a, b } = await fleet({ IDENT_COLD_LOOKUPS_PER_MIN: "3" });
    const client = `client-${n++}`;
    const decisions = [
      await a.traffic.windows.coldLookups.take(client),
      await b.traffic.windows.coldLookups.take(client),
      await a.traffic.windows.coldLookups.take(client),
    ];
    expect(decisions.every((d) => d.ok)).toBe(true);
    expect(await b.traffic.windows.coldLookups.take(client)).toMatchObject({ ok: false });
    expect(await a.traffic.windows.coldLookups.check(client)).toMatchObject({ ok: false });
    // Another client is not touched.
    expect(await b.traffic.windows.coldLookups.take(`${client}-other`)).toEqual({ ok: true });
  });

  it("a host's outbound budget is spent by both instances together", async () => {
    const { a, b } = await fleet({ IDENT_HOST_BUDGET_PER_MIN: "2" });
    ctx.net.resetCounts();
    // Distinct documents on one host, one per instance in turn (each client's share is 1 of the 2):
    // the third is refused wherever it is asked.
    answered(await a.resolveEntity("carol.example", { refresh: true, client: "203.0.113.1" }));
    const second = answered(await b.resolveEntity("carol.example", { refresh: true, client: "203.0.113.2" }));
    expect(second.entity.status).toBe("accepted");
    // Past the budget, the document known within the day is served rather than refused (docs/architecture.md#traffic).
    const third = answered(await a.resolveEntity("carol.example", { refresh: true, client: "203.0.113.3" }));
    expect(third.entity.status).toBe("accepted");
    expect(ctx.net.requests.get("carol.example/ident.json")).toBe(2);
  });
});

describe("limits held for the fleet, each instance fetching on its thread (lib/fetch/thread.ts)", () => {
  /** Two instances as two server processes: each thread counts its budgets in Redis on a connection of its own. */
  async function threadedFleet(env: Record<string, string>) {
    const [a, b] = [instance(env, undefined, true), instance(env, undefined, true)];
    await Promise.all([ready(a), ready(b)]);
    return { a, b };
  }

  it("both threads spend one host's budget together, and each instance's admission sees it spent", async () => {
    const { a, b } = await threadedFleet({ IDENT_HOST_BUDGET_PER_MIN: "2" });
    ctx.net.resetCounts();
    answered(await a.resolveEntity("carol.example", { refresh: true, client: "203.0.113.1" }));
    const second = answered(await b.resolveEntity("carol.example", { refresh: true, client: "203.0.113.2" }));
    expect(second.entity.status).toBe("accepted");
    expect(await a.traffic.windows.hostPerMinute.check("carol.example")).toMatchObject({ ok: false });
    expect(await b.traffic.windows.hostPerMinute.check("carol.example")).toMatchObject({ ok: false });
    // Past the budget, wherever asked: the document known within the day, not a third request.
    const third = answered(await a.resolveEntity("carol.example", { refresh: true, client: "203.0.113.3" }));
    expect(third.entity.status).toBe("accepted");
    expect(ctx.net.requests.get("carol.example/ident.json")).toBe(2);
  });

  it("Redis away: each thread counts alone and never fails; its instance's admission reads that count", async () => {
    const { a, b } = await threadedFleet({ IDENT_HOST_BUDGET_PER_MIN: "1" });
    await redis.pause();
    try {
      ctx.net.resetCounts();
      expect(answered(await a.resolveEntity("carol.example", { refresh: true, client: "203.0.113.4" })).entity.status).toBe("accepted");
      expect(await a.traffic.windows.hostPerMinute.check("carol.example")).toMatchObject({ ok: false });
      expect(await b.traffic.windows.hostPerMinute.check("carol.example")).toEqual({ ok: true });
      expect(answered(await b.resolveEntity("carol.example", { refresh: true, client: "203.0.113.5" })).entity.status).toBe("accepted");
      expect(ctx.net.requests.get("carol.example/ident.json")).toBe(2);
    } finally {
      await redis.resume();
    }
  });
});

describe("Redis stopped in the middle of a run", () => {
  it("each instance counts its own limits meanwhile, and answers at once", async () => {
    const { a, b } = await fleet({ IDENT_COLD_LOOKUPS_PER_MIN: "2" });
    await redis.pause();
    try {
      const client = `client-${n++}`;
      const onA = [
        await a.traffic.windows.coldLookups.take(client),
        await a.traffic.windows.coldLookups.take(client),
        await a.traffic.windows.coldLookups.take(client),
      ];
      expect(onA.map((d) => d.ok)).toEqual([true, true, false]);
      // B has its own count while Redis is away.
      expect(await b.traffic.windows.coldLookups.take(client)).toEqual({ ok: true });
    } finally {
      await redis.resume();
    }
  });

  it("readiness: a link still connecting at start answers once connected; a paused Redis does not answer", async () => {
    const link = connectRedis(redis.url, { log: (line) => logged.push(line) });
    try {
      expect(link.usable()).toBe(false); // the connection is being made
      expect(await link.ping()).toBe(true);
      await redis.pause();
      try {
        expect(await link.ping()).toBe(false);
      } finally {
        await redis.resume();
      }
    } finally {
      await link.close();
    }
  });

  it("no lookup fails while it is down; sharing resumes when it is back", async () => {
    const { a, b } = await fleet();
    const domains = ["alice.example", "bob.example", "acme.example", "carol.example"];
    const failures: unknown[] = [];
    let stopRun = false;
    let lookups = 0;
    const run = (async () => {
      for (let i = 0; !stopRun && i < 10_000; i++) {
        const r = i % 2 ? a : b;
        try {
          const result = answered(await r.resolveEntity(domains[i % domains.length]!, { refresh: i % 3 === 0 }));
          if (result.entity.status !== "accepted") failures.push(result.entity);
          lookups++;
        } catch (err) {
          failures.push(err);
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    await redis.pause();
    const whileDown = lookups;
    await new Promise((r) => setTimeout(r, 1500));
    expect(lookups).toBeGreaterThan(whileDown);
    expect(a.fleet?.usable()).toBe(false);
    await redis.resume();
    await Promise.all([ready(a), ready(b)]);
    stopRun = true;
    await run;
    expect(failures).toEqual([]);
    expect(logged.some((l) => l.startsWith("redis: ") && l.includes("uses its own cache"))).toBe(true);
    expect(logged.some((l) => l.includes("redis: answering again"))).toBe(true);

    // Sharing is back: a refresh on both at once is one request again.
    ctx.net.resetCounts();
    (await Promise.all([a.resolveEntity("gamma.example", { refresh: true }), b.resolveEntity("gamma.example", { refresh: true })])).map(
      answered,
    );
    expect(fetchedTwice()).toEqual([]);
  }, 30_000);
});

describe("Redis slow (a process that no longer answers)", () => {
  it("lookups are answered: a command that times out rests the link instead of slowing every document", async () => {
    const { a } = await fleet();
    answered(await a.resolveEntity("alice.example"));
    redis.freeze();
    try {
      // Each document of a cold lookup would ask Redis; only the first waits for its timeout.
      const result = answered(await a.resolveEntity("bob.example", { refresh: true }));
      expect(result.entity.status).toBe("accepted");
      expect(a.fleet?.usable()).toBe(false);
      expect(logged.some((l) => l.startsWith("redis: a command failed"))).toBe(true);
      // The lookup read and locked 10 documents or so; one command timed out, the rest were not sent.
      const text = await a.metrics.registry.metrics();
      expect(metric(text, "ident_redis_command_failures_total")).toBe(1);
      expect(metric(text, "ident_redis_up")).toBe(0);
    } finally {
      redis.thaw();
    }
    await ready(a);
  }, 30_000);
});

describe("one index for the fleet", () => {
  it("an entity resolved on one instance is found by a search on the other", async () => {
    const database = await postgres.database(`fleet${process.pid}_${n++}`);
    const { a, b } = await fleet({}, database);
    answered(await a.resolveEntity("acme.example"));
    const storeB = (await b.store)!;
    const found = await storeB.search("acme");
    expect(found?.results.map((hit) => hit.domain)).toContain("acme.example");
  });

  it("a background job due on both instances runs once", async () => {
    const database = await postgres.database(`fleet${process.pid}_${n++}`);
    const { a, b } = await fleet({}, database);
    const storeA = (await a.store)!;
    const storeB = (await b.store)!;
    await storeA.db.query("INSERT INTO crawl_queue (domain, reason, priority, due_at) VALUES ('bob.example', 'recheck', 2, now())");
    const runs: string[] = [];
    const crawl = (r: ConfiguredResolver, store: Store, name: string) =>
      startCrawler({
        store,
        resolveEntity: async (domain) => {
          runs.push(`${name}:${domain}`);
          return r.resolveEntity(domain, { background: true, revalidate: true });
        },
        concurrency: 4,
        seeds: [],
        queue: { max: 1000, freshS: 3600 },
        pollMs: 50,
        log: () => {},
      });
    const crawlers = [crawl(a, storeA, "a"), crawl(b, storeB, "b")];
    const until = Date.now() + 15_000;
    while ((await queueStats(storeA.db)).due > 0 || crawlers.some((c) => c.running > 0)) {
      if (Date.now() > until) throw new Error("the job did not run");
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 300));
    await Promise.all(crawlers.map((c) => c.stop()));
    expect(runs.filter((r) => r.endsWith(":bob.example"))).toHaveLength(1);
  });

  it("a transaction open when PostgreSQL stops fails by itself: the process lives on", async () => {
    const database = await postgres.database(`fleet${process.pid}_${n++}`);
    const { a } = await fleet({}, database);
    const store = (await a.store)!;
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    let resume!: () => void;
    const held = new Promise<void>((r) => (resume = r));
    const outcome = store.db
      .transaction(async (tx) => {
        await tx.query("SELECT 1");
        entered();
        await held;
        return tx.query("SELECT 2");
      })
      .then(
        () => "committed",
        (err: Error) => err.message,
      );
    await inside;
    await postgres.pause();
    try {
      // The server closed the connection in the middle of the transaction: heard, not thrown.
      await new Promise((r) => setTimeout(r, 200));
      resume();
      expect(await outcome).not.toBe("committed");
    } finally {
      await postgres.resume();
    }
    expect(await store.ping()).toBe(true);
  });

  it("PostgreSQL stopped and started: lookups are answered, readiness turns and returns, the waiting results and the queue are kept", async () => {
    const database = await postgres.database(`fleet${process.pid}_${n++}`);
    const { a } = await fleet({}, database);
    const store = (await a.store)!;
    await store.db.query(
      "INSERT INTO crawl_queue (domain, reason, priority, due_at) VALUES ('queued.test', 'discovered', 1, now() + interval '1 hour')",
    );
    expect(await store.ping()).toBe(true);
    await postgres.pause();
    try {
      expect(await store.ping()).toBe(false);
      const result: EntityResult = answered(await a.resolveEntity("carol.example", { refresh: true }));
      expect(result.entity.status).toBe("accepted");
      expect(store.backlog).toBe(1);
    } finally {
      await postgres.resume();
    }
    expect(await store.ping()).toBe(true);
    const until = Date.now() + 15_000;
    while (store.backlog > 0) {
      if (Date.now() > until) throw new Error("the waiting result was not recorded");
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await store.history("carol.example"), logged.join("\n")).not.toBeNull();
    const queued = await store.db.query<{ domain: string }>("SELECT domain FROM crawl_queue WHERE domain = 'queued.test'");
    expect(queued).toHaveLength(1);
  }, 30_000);
});

describe("an instance that stops (docs/deploying.md#upgrading-without-losing-results)", () => {
  it("flush: the results waiting for the database are written before the store closes; when it stays away, it says how many wait", async () => {
    const database = await postgres.database(`fleet${process.pid}_${n++}`);
    const { a } = await fleet({}, database);
    const store = (await a.store)!;
    expect(await store.ping()).toBe(true);
    await postgres.pause();
    try {
      answered(await a.resolveEntity("carol.example", { refresh: true }));
      answered(await a.resolveEntity("bob.example", { refresh: true }));
      expect(store.backlog).toBe(2);
      // Still away: the flush gives up after its time, and answers what still waits.
      expect(await store.flush(300)).toBe(2);
    } finally {
      await postgres.resume();
    }
    // Back: the flush writes them now, not at the next retry.
    expect(await store.flush(15_000)).toBe(0);
    expect(await store.history("carol.example")).not.toBeNull();
    expect(await store.history("bob.example")).not.toBeNull();
  }, 40_000);
});

/** The value of one sample of a Prometheus text exposition; 0 when absent. */
function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (want.every((w) => line.includes(w))) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return 0;
}
