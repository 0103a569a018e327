/**
 * Discovery and re-verification (docs/decisions.md#discovery) on both engines, over the sample
 * network: a seed finds what it points to and what that points to; each document is fetched no more
 * than the cache allows; re-verification follows a document that changes, and back; stale on error
 * with a publisher that answers 503 or is down.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCrawler, type Crawler } from "ident-resolver/discovery";
import { createDocumentCache } from "ident-resolver";
import { createResolverCore } from "ident-resolver";
import type { EntityResult } from "ident-resolver";
import { openStore, type Store } from "ident-resolver/store";
import { discoveredDomains, queueStats } from "ident-resolver/store";
import { useEngines } from "../helpers/engines";
import { useSampleNetwork } from "../helpers/sample";

const ctx = useSampleNetwork();
const { engines: ENGINES, database } = useEngines("crawl");

const FRESH_S = 3600;

/** Waits until nothing is due or running, and the crawler is idle. */
async function settled(store: Store, crawler: Crawler, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // An empty queue before the seeds are in is not settled.
  await crawler.seeded;
  for (;;) {
    const stats = await queueStats(store.db);
    if (stats.due === 0 && stats.running === 0 && crawler.running === 0) return;
    if (Date.now() > deadline) throw new Error(`the crawl did not settle: ${JSON.stringify(stats)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(ENGINES)("discovery on $name", ({ location }) => {
  let store: Store;
  let crawler: Crawler;
  /** The one resolver, its cache fresh for an hour as in production. */
  let resolver: ReturnType<typeof createResolverCore>;
  beforeAll(async () => {
    let wake = () => {};
    store = await openStore(await location(), console.error, { discovery: { max: 1000, freshS: FRESH_S, queued: () => wake() } });
    resolver = createResolverCore({
      fetch: ctx.fetcher(),
      cache: createDocumentCache({ freshMs: FRESH_S * 1000 }),
      annotate: (r) => store.record(r),
    });
    ctx.net.resetCounts();
    crawler = startCrawler({
      store,
      resolveEntity: (d) => resolver.resolveEntity(d, { background: true, revalidate: true }),
      concurrency: 4,
      seeds: ["acme.example"],
      queue: { max: 1000, freshS: FRESH_S },
      pollMs: 200,
      log: () => {},
    });
    wake = crawler.wake;
  }, 60_000);
  afterAll(async () => {
    ctx.net.change("blog.alice.example", null);
    await crawler?.stop();
    await store?.close();
  });

  it("one seed finds every entity reachable from it, and each document is fetched once", async () => {
    await settled(store, crawler);
    const rows = await store.db.query<{ domain: string; status: string }>("SELECT domain, status FROM entities ORDER BY domain");
    const accepted = rows.filter((r) => r.status === "accepted").map((r) => r.domain);
    // acme → its property jointventure.example, whose owners are beta and gamma; its credentials'
    // issuers; and from those, whatever they point to.
    expect(accepted).toEqual(expect.arrayContaining(["acme.example", "beta.example", "gamma.example"]));
    // Closed: every domain a recorded entity points to has been resolved too.
    const known = new Set(rows.map((r) => r.domain));
    for (const domain of accepted) {
      const result = (await resolver.resolveEntity(domain, { cacheOnly: true })) as EntityResult;
      for (const found of discoveredDomains(result)) expect(known, `${domain} → ${found}`).toContain(found);
    }
    // No URL fetched twice: the cache's fresh window holds for the whole crawl.
    const twice = [...ctx.net.requests].filter(([, n]) => n > 1);
    expect(twice).toEqual([]);
    // Every indexed entity is queued for its re-verification, none due now.
    const queue = await store.db.query<{ n: string }>("SELECT count(*) AS n FROM crawl_queue WHERE due_at > now()");
    expect(Number(queue[0]!.n)).toBe(rows.length);
  });

  it("a restart loses nothing queued, and a job taken by an instance is not taken by another", async () => {
    const { takeJobs, finishJob } = await import("ident-resolver/store");
    // Queued while the crawler runs, due only after it stops: a running crawler polls the queue and
    // would otherwise take the job before the two instances below ask.
    await store.db.query(
      "INSERT INTO crawl_queue (domain, reason, priority, due_at) VALUES ('queued-one.test', 'discovered', 1, now() + interval '1 hour') ON CONFLICT DO NOTHING",
    );
    await crawler.stop();
    await store.db.query("UPDATE crawl_queue SET due_at = now() WHERE domain = 'queued-one.test'");
    const first = await takeJobs(store.db, 10);
    const second = await takeJobs(store.db, 10);
    expect(first).toContain("queued-one.test");
    expect(second).not.toContain("queued-one.test");
    for (const d of first) await finishJob(store.db, d, 0);
    await store.db.query("DELETE FROM crawl_queue WHERE domain = 'queued-one.test'");
  });

  it("re-verification flips a claim when its counterpart changes, and back; stale on error through a 503 and an outage", async () => {
    // A resolver whose documents and failures are never fresh, so each re-verification fetches again.
    const eager = createResolverCore({
      fetch: ctx.fetcher(),
      cache: createDocumentCache({ freshMs: 0, failureMs: 0 }),
      annotate: (r) => store.record(r),
    });
    const recheck = async () => (await eager.resolveEntity("alice.example", { background: true, revalidate: true })) as EntityResult;
    const blog = (r: EntityResult) => r.properties.find((c) => c.id === "§:property:blog.alice.example")!;
    expect(blog(await recheck()).verified).toBe(true);

    // The blog's owner list drops alice: not_listed, at once.
    ctx.net.change("blog.alice.example", {
      files: {
        "/ident-property.json": JSON.stringify({
          ident_property: {
            id: "§:property:blog.alice.example",
            name: "Workshop Notes",
            ownership: [{ network_id: "§:entity:bob.example" }],
          },
        }),
      },
    });
    const dropped = blog(await recheck());
    expect(dropped).toMatchObject({ verified: false, reason: "not_listed" });
    expect(dropped.since?.failing_since).toBeDefined();

    ctx.net.change("blog.alice.example", null);
    const back = blog(await recheck());
    expect(back.verified).toBe(true);
    expect(back.since?.verified_since).toBeDefined();
    expect(back.since!.verified_since! > dropped.since!.failing_since!).toBe(true);

    // 503 on every path of the blog: transient, the verdict is kept and marked stale.
    ctx.net.change("blog.alice.example", {
      routes: { "/ident-property.json": { status: 503, body: "busy" }, "/": { status: 503, body: "busy" } },
    });
    const during503 = blog(await recheck());
    expect(during503.verified).toBe(true);
    expect(during503.stale?.until).toBeDefined();
    // The site down altogether: stale too.
    ctx.net.change("blog.alice.example", { down: true });
    const down = blog(await recheck());
    expect(down).toMatchObject({ verified: true, stale: { reason: "unreachable" } });
    ctx.net.change("blog.alice.example", null);
    const recovered = blog(await recheck());
    expect(recovered.verified).toBe(true);
    expect(recovered.stale).toBeUndefined();
    expect(recovered.since?.verified_since).toBe(back.since?.verified_since);

    const changes = (await store.history("alice.example"))!.changes.filter((c) => c.id === "§:property:blog.alice.example");
    expect(changes.slice(0, 3).map((c) => c.verified)).toEqual([true, false, true]);
  });

  it("a recorded check schedules the next: a day later when all verify, an hour when not, doubling", async () => {
    const due = async (domain: string) =>
      (
        await store.db.query<{ due_at: Date; backoff_s: number }>("SELECT due_at, backoff_s FROM crawl_queue WHERE domain = $1", [domain])
      )[0]!;
    const { entities } = {
      entities: await store.db.query<{ domain: string; last_checked_at: Date; unverified: number; status: string }>(
        "SELECT domain, last_checked_at, unverified, status FROM entities",
      ),
    };
    for (const e of entities) {
      const row = await due(e.domain);
      const hours = (row.due_at.getTime() - e.last_checked_at.getTime()) / 3600_000;
      if (e.status === "accepted" && e.unverified === 0) expect(hours, e.domain).toBe(24);
      else expect([1, 2, 4, 8, 16, 24], e.domain).toContain(hours);
    }
  });
});

it("two instances on one PostgreSQL database never take the same job, and one's lease ends for the other", async () => {
  const url = await database("twoinstances");
  const a = await openStore({ kind: "server", url }, () => {});
  const b = await openStore({ kind: "server", url }, () => {});
  const { takeJobs, finishJob, enqueue } = await import("ident-resolver/store");
  try {
    const domains = Array.from({ length: 40 }, (_, i) => `job${i}.test`);
    await a.db.transaction((tx) => enqueue(tx, domains, "discovered", { max: 1000, freshS: 3600 }));
    // Both take at once, in rounds, until nothing is left.
    const takenA: string[] = [];
    const takenB: string[] = [];
    for (let round = 0; round < 10; round++) {
      const [x, y] = await Promise.all([takeJobs(a.db, 3), takeJobs(b.db, 3)]);
      takenA.push(...x);
      takenB.push(...y);
    }
    expect(takenA.filter((d) => takenB.includes(d))).toEqual([]);
    expect(new Set([...takenA, ...takenB]).size).toBe(40);
    // A's instance dies holding job0: after its lease, B takes it.
    const held = takenA[0]!;
    await a.db.query("UPDATE crawl_queue SET locked_until = now() - interval '1 second' WHERE domain = $1", [held]);
    expect(await takeJobs(b.db, 40)).toEqual([held]);
    for (const d of [...takenA, ...takenB]) await finishJob(a.db, d);
  } finally {
    await a.close();
    await b.close();
  }
});
