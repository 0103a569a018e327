/**
 * Discovery and re-verification in the background (docs/decisions.md#discovery): takes due jobs from
 * the store's queue, at most `concurrency` at once, and resolves each as background work, whose
 * fetches wait behind every person's. Recording the result (lib/store) moves the job to its next
 * check and queues what the result points to.
 */
import { isRefusal, type FetchRefusal } from "../traffic/refusal.ts";
import type { Resolver } from "../resolver/index.ts";
import { newWork } from "../resolver/documents.ts";
import type { EntityResult } from "../result/record.ts";
import type { Store } from "../store/index.ts";
import { enqueue, finishJob, takeJobs, type DiscoveryOptions } from "../store/queue.ts";

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

/** What a running crawler holds: its options, the jobs running, and where its looking at the queue stands. */
type CrawlerState = {
  options: CrawlerOptions;
  store: Store;
  concurrency: number;
  log: (line: string) => void;
  pollMs: number;
  jobs: Set<Promise<void>>;
  stopped: boolean;
  /** Resolutions finished since start. */
  done: number;
  timer: NodeJS.Timeout | null;
  /** The look at the queue running now, if any. */
  looking: Promise<void> | null;
  /** A wake came during the look: one more look once it is over. */
  again: boolean;
  /** The queue could not be read at the last look (said once per outage). */
  unreadable: boolean;
};

export function startCrawler(options: CrawlerOptions): Crawler {
  const { store, concurrency, log = console.error } = options;
  const state: CrawlerState = {
    options,
    store,
    concurrency,
    log,
    pollMs: options.pollMs ?? 2000,
    jobs: new Set<Promise<void>>(),
    stopped: false,
    done: 0,
    timer: null,
    looking: null,
    again: false,
    unreadable: false,
  };
  const seeded = queueSeeds(state);
  void seeded.then(() => tick(state));

  return {
    seeded: seeded.then(() => undefined),
    wake: () => wake(state),
    get running() {
      return state.jobs.size;
    },
    get done() {
      return state.done;
    },
    stop: (graceMs = 5000) => stop(state, seeded, graceMs),
  };
}

/** Resolves one job's domain and releases the job to its next check: soon when it was refused or failed. */
async function run(state: CrawlerState, domain: string): Promise<void> {
  const { options, store, log } = state;
  let retryS = options.queue.freshS;
  try {
    // Refused for now (the outbound cap, a budget): not a verdict, tried again soon.
    if (isRefusal(await options.resolveEntity(domain))) retryS = 60;
  } catch (err) {
    retryS = 60;
    log(`crawl: ${domain} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  state.done++;
  await finishJob(store.db, domain, Math.max(60, retryS)).catch((err: unknown) => log(`crawl: ${domain} not released: ${String(err)}`));
}

/** Takes as many due jobs as there is room for and starts each; a job that ends wakes the crawler. */
async function look(state: CrawlerState): Promise<void> {
  const { store, log } = state;
  if (state.stopped) return;
  const free = state.concurrency - state.jobs.size;
  if (free <= 0) return;
  const domains = await takeJobs(store.db, free).then(
    (taken) => {
      if (state.unreadable) log("crawl: the queue can be read again; background resolutions resume");
      state.unreadable = false;
      return taken;
    },
    (err: unknown) => {
      // Said once per outage (docs/deploying.md#when-a-part-fails): the jobs wait in the database.
      if (!state.unreadable)
        log(`crawl: the queue could not be read: ${err instanceof Error ? err.message : String(err)}; jobs wait until it can`);
      state.unreadable = true;
      return [];
    },
  );
  for (const domain of domains) {
    const job = run(state, domain).finally(() => {
      state.jobs.delete(job);
      wake(state);
    });
    state.jobs.add(job);
  }
}

/** One look at a time; a wake during a look makes one more. */
function wake(state: CrawlerState): void {
  if (state.stopped) return;
  if (state.looking) {
    state.again = true;
    return;
  }
  state.looking = look(state).finally(() => {
    state.looking = null;
    if (state.again) {
      state.again = false;
      wake(state);
    }
  });
}

/** Looks at the queue now, and again every `pollMs` until stopped. */
function tick(state: CrawlerState): void {
  wake(state);
  if (!state.stopped) state.timer = setTimeout(() => tick(state), state.pollMs).unref();
}

/** Queues the seeds; settles with how many were queued, 0 when there are none or they could not be. */
function queueSeeds(state: CrawlerState): Promise<number> {
  const { options, store, log } = state;
  return options.seeds.length
    ? store.db
        .transaction((tx) => enqueue(tx, options.seeds, "seed", options.queue))
        .catch((err: unknown) => {
          log(`crawl: the seeds were not queued: ${err instanceof Error ? err.message : String(err)}`);
          return 0;
        })
    : Promise.resolve(0);
}

/** Stops taking jobs and waits for those running, at most `graceMs`. */
async function stop(state: CrawlerState, seeded: Promise<number>, graceMs: number): Promise<void> {
  state.stopped = true;
  if (state.timer) clearTimeout(state.timer);
  await seeded;
  await state.looking;
  let t: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled([...state.jobs]), new Promise((r) => (t = setTimeout(r, graceMs)))]);
  clearTimeout(t);
}
