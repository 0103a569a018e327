/**
 * Discovery and re-verification in the background (docs/decisions.md#discovery): takes due jobs from
 * the store's queue, at most `concurrency` at once, and resolves each as background work, whose
 * fetches wait behind every person's. Recording the result (lib/store) moves the job to its next
 * check and queues what the result points to.
 */
import { isRefusal, type FetchRefusal } from "../traffic/refusal";
import type { Resolver } from "../resolver";
import { newWork } from "../resolver/documents";
import type { EntityResult } from "../result/record";
import type { Store } from "../store";
import { enqueue, finishJob, takeJobs, type DiscoveryOptions } from "../store/queue";

/**
 * Re-verifies one entity as background work (docs/decisions.md#discovery). A document answered as
 * last fetched because its fetch was refused was not re-verified: that refusal is the answer, so the
 * job is tried again in a minute rather than an hour.
 */
export async function reverify(resolver: Pick<Resolver, "resolveEntity">, domain: string): Promise<EntityResult | FetchRefusal> {
  const work = newWork();
  const result = await resolver.resolveEntity(domain, { background: true, revalidate: true, work });
  return isRefusal(result) ? result : (work.knownServed[0] ?? result);
}

export type CrawlerOptions = {
  store: Store;
  /** Resolves one entity as background work (`background`, `revalidate`), recording it. */
  resolveEntity: (domain: string) => Promise<unknown>;
  /** `IDENT_CRAWL_CONCURRENCY`. */
  concurrency: number;
  /** `IDENT_CRAWL_SEEDS`, queued at start. */
  seeds: string[];
  queue: DiscoveryOptions;
  /** How often the queue is looked at when nothing wakes the crawler. @default 2000 */
  pollMs?: number;
  log?: (line: string) => void;
};

export type Crawler = {
  /** Settles once the seeds are queued (or could not be). */
  readonly seeded: Promise<void>;
  /** Looks at the queue now (something was queued). */
  wake(): void;
  /** Jobs running now. */
  readonly running: number;
  /** Resolutions finished since start. */
  readonly done: number;
  /** Stops taking jobs and waits for those running, at most `graceMs`. */
  stop(graceMs?: number): Promise<void>;
};

export function startCrawler(options: CrawlerOptions): Crawler {
  const { store, concurrency, log = console.error } = options;
  const pollMs = options.pollMs ?? 2000;
  const jobs = new Set<Promise<void>>();
  let stopped = false;
  let done = 0;
  let timer: NodeJS.Timeout | null = null;
  let looking: Promise<void> | null = null;
  let again = false;
  let unreadable = false;

  async function run(domain: string): Promise<void> {
    let retryS = options.queue.freshS;
    try {
      // Refused for now (the outbound cap, a budget): not a verdict, tried again soon.
      if (isRefusal(await options.resolveEntity(domain))) retryS = 60;
    } catch (err) {
      retryS = 60;
      log(`crawl: ${domain} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    done++;
    await finishJob(store.db, domain, Math.max(60, retryS)).catch((err: unknown) => log(`crawl: ${domain} not released: ${String(err)}`));
  }

  async function look(): Promise<void> {
    if (stopped) return;
    const free = concurrency - jobs.size;
    if (free <= 0) return;
    const domains = await takeJobs(store.db, free).then(
      (taken) => {
        if (unreadable) log("crawl: the queue can be read again; background resolutions resume");
        unreadable = false;
        return taken;
      },
      (err: unknown) => {
        // Said once per outage (docs/deploying.md#when-a-part-fails): the jobs wait in the database.
        if (!unreadable)
          log(`crawl: the queue could not be read: ${err instanceof Error ? err.message : String(err)}; jobs wait until it can`);
        unreadable = true;
        return [];
      },
    );
    for (const domain of domains) {
      const job = run(domain).finally(() => {
        jobs.delete(job);
        wake();
      });
      jobs.add(job);
    }
  }

  /** One look at a time; a wake during a look makes one more. */
  function wake(): void {
    if (stopped) return;
    if (looking) {
      again = true;
      return;
    }
    looking = look().finally(() => {
      looking = null;
      if (again) {
        again = false;
        wake();
      }
    });
  }

  function tick(): void {
    wake();
    if (!stopped) timer = setTimeout(tick, pollMs).unref();
  }

  const seeded = options.seeds.length
    ? store.db
        .transaction((tx) => enqueue(tx, options.seeds, "seed", options.queue))
        .catch((err: unknown) => {
          log(`crawl: the seeds were not queued: ${err instanceof Error ? err.message : String(err)}`);
          return 0;
        })
    : Promise.resolve(0);
  void seeded.then(tick);

  return {
    seeded: seeded.then(() => undefined),
    wake,
    get running() {
      return jobs.size;
    },
    get done() {
      return done;
    },
    async stop(graceMs = 5000) {
      stopped = true;
      if (timer) clearTimeout(timer);
      await seeded;
      await looking;
      let t: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...jobs]), new Promise((r) => (t = setTimeout(r, graceMs)))]);
      clearTimeout(t);
    },
  };
}
