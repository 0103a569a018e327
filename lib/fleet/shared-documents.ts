/**
 * The document cache shared by a fleet, in Redis (docs/deploying.md#what-redis-holds): each
 * outcome of docs/decisions.md#fetching with when it was fetched, and a single flight across
 * instances, so that however many instances ask for one cold URL, the publisher gets one request.
 *
 * - `doc:<mode> <url>`: the cached outcome, kept as long as the in-process cache would keep it
 *   (found: the day; failed: 5 minutes). A transient failure never replaces a found document.
 * - `lock:<mode> <url>`: held by the instance fetching the URL, with an expiry past its deadline.
 * - `last:<mode> <url>`: the latest outcome of a fetch, transient or not, with an id of its own,
 *   for the instances that waited on the lock (kept a minute).
 *
 * Every command may fail; then the instance fetches by itself, as a single instance would.
 */
import { randomUUID } from "node:crypto";
import { LRUCache } from "lru-cache";
import { cacheKey } from "../fetch/cache.ts";
import { isTransientFailure } from "../fetch/transient.ts";
import type { Fetcher, FetchOutcome } from "../fetch/outcome.ts";
import { isRefusal } from "../traffic/refusal.ts";
import { KEY_PREFIX, type FleetLink } from "../redis.ts";
import { extend } from "../objects.ts";

export type SharedEntry = { outcome: FetchOutcome; fetchedAt: number };
/** A fetch's outcome as `last:` holds it: its id tells one fetch from the next without comparing clocks. */
type LastEntry = SharedEntry & { id?: string };

export type SharedDocuments = {
  /** The outcome Redis holds for a cache key; undefined when it holds none or cannot say. */
  read(key: string): Promise<SharedEntry | undefined>;
  /** Whether an instance holds the fetch lock of a cache key now. */
  loading(key: string): Promise<boolean>;
  /** `fetch`, made one request per URL for the whole fleet: the lock's holder fetches, the others wait for its outcome. */
  singleFlight(fetch: Fetcher): Fetcher;
};

export type SharedDocumentsOptions = {
  /** How long a found document is kept (the cache's day). */
  maxAgeMs: number;
  /** How long a failure is kept. */
  failureMs: number;
  /** A document's deadline; a waiter gives up on the lock's holder after twice this and fetches itself. */
  fetchTimeoutMs: number;
  now?: () => number;
};

// Sets the document unless the new outcome is a transient failure and a found document is there
// (docs/decisions.md#caching). Values start with "1" when found, "0" when not.
const KEEP = `
if ARGV[3] == '1' then
  local current = redis.call('GET', KEYS[1])
  if current and string.sub(current, 1, 1) == '1' then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

// Deletes the lock only when this instance still holds it.
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

const encode = (entry: LastEntry) => `${entry.outcome.ok ? "1" : "0"}${JSON.stringify(entry)}`;

function decode(value: string | null | undefined): LastEntry | undefined {
  if (typeof value !== "string") return undefined;
  try {
    const entry = JSON.parse(value.slice(1)) as LastEntry;
    return typeof entry.fetchedAt === "number" && typeof entry.outcome?.url === "string" ? entry : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const doc = (key: string) => `${KEY_PREFIX}doc:${key}`;
const lock = (key: string) => `${KEY_PREFIX}lock:${key}`;
const last = (key: string) => `${KEY_PREFIX}last:${key}`;

/** What the shared documents keep: the link, the options, how long a lock holds, what was seen at a miss. */
type Shared = {
  link: FleetLink;
  options: SharedDocumentsOptions;
  now: () => number;
  lockMs: number;
  /**
   * The latest fetch Redis knew of when this instance last found a key missing: a fetch after it,
   * by whichever instance, is as good as one of ours (it closes the gap between a miss and the lock).
   * Read with the miss itself, so no clock is compared; kept for a deadline, and not taken away by the
   * first fetch that reads it, since two lookups here may both miss and the second reach the lock
   * after the first's fetch is done.
   */
  seenAtMiss: LRUCache<string, string>;
};

export function createSharedDocuments(link: FleetLink, options: SharedDocumentsOptions): SharedDocuments {
  const sh: Shared = {
    link,
    options,
    now: options.now ?? Date.now,
    // The holder may wait its turn in the outbound queue (up to a deadline) before its own deadline runs.
    lockMs: 2 * options.fetchTimeoutMs + 1000,
    seenAtMiss: new LRUCache<string, string>({ max: 10_000, ttl: options.fetchTimeoutMs }),
  };
  return {
    async read(key) {
      const answer = await link.run((r) => r.multi().get(doc(key)).get(last(key)).exec());
      if (!answer) return undefined;
      const entry = decode(answer[0]?.[1] as string | null);
      if (!entry) sh.seenAtMiss.set(key, decode(answer[1]?.[1] as string | null)?.id ?? "");
      return entry;
    },
    async loading(key) {
      return (await link.run((r) => r.exists(lock(key)))) === 1;
    },
    singleFlight: (fetch) => (url, mode, fetchOptions) => fetchOnce(sh, fetch, url, mode, fetchOptions),
  };
}

async function keep(sh: Shared, key: string, entry: SharedEntry) {
  const value = encode(entry);
  const ttl = entry.outcome.ok ? sh.options.maxAgeMs : sh.options.failureMs;
  const transient = !entry.outcome.ok && isTransientFailure(entry.outcome) ? "1" : "0";
  const latest = encode(extend(entry, { id: randomUUID() }));
  await sh.link.run((r) => r.multi().eval(KEEP, 1, doc(key), value, String(ttl), transient).set(last(key), latest, "PX", 60_000).exec());
}

/** The id of the latest fetch Redis knows for a key ("" for none); null when Redis cannot say. */
async function latestId(sh: Shared, key: string): Promise<string | null> {
  const answer = await sh.link.run(async (r) => ({ value: await r.get(last(key)) }));
  return answer && (decode(answer.value)?.id ?? "");
}

/** Waits for the holder's outcome, a fetch other than `seen`; undefined when the lock goes or expires without one. */
async function waitFor(sh: Shared, key: string, seen: string): Promise<SharedEntry | undefined> {
  const until = sh.now() + sh.lockMs;
  for (let pause = 20; sh.now() < until; pause = Math.min(pause * 2, 200)) {
    await sleep(pause);
    const answer = await sh.link.run((r) => r.multi().get(last(key)).exists(lock(key)).exec());
    if (!answer) return undefined;
    const entry = decode(answer[0]?.[1] as string | null);
    if (entry && (entry.id ?? "") !== seen) return entry;
    if (answer[1]?.[1] === 0) return undefined;
  }
  return undefined;
}

/** One fetch of a document for the whole fleet: another instance's outcome when it holds the lock, else ours, kept for all. */
async function fetchOnce(sh: Shared, fetch: Fetcher, url: string, mode: Parameters<Fetcher>[1], fetchOptions: Parameters<Fetcher>[2]) {
  const { link } = sh;
  const key = cacheKey(url, mode);
  // Without a miss of its own (a refresh), the fetch wanted is one that starts after now.
  const seen = sh.seenAtMiss.get(key) ?? (await latestId(sh, key));
  const token = randomUUID();
  // null: Redis cannot say, and this instance fetches as if it were alone.
  const lockState = await link.run(async (r) => ((await r.set(lock(key), token, "PX", sh.lockMs, "NX")) === "OK" ? "held" : "taken"));
  if (lockState === "taken" && seen !== null) {
    // Another instance is fetching it: its outcome, or, if it gives up, a fetch of our own.
    const theirs = await waitFor(sh, key, seen);
    if (theirs) return theirs.outcome;
  } else if (lockState === "held" && seen !== null) {
    // Another instance may have finished it between our miss and our lock.
    const done = decode(await link.run((r) => r.get(last(key))));
    if (done && (done.id ?? "") !== seen) {
      await link.run((r) => r.eval(RELEASE, 1, lock(key), token));
      return done.outcome;
    }
  }
  try {
    const outcome = await fetch(url, mode, fetchOptions);
    // A refusal is this instance's, never a document: the waiters fetch for themselves.
    if (!isRefusal(outcome)) await keep(sh, key, { outcome, fetchedAt: sh.now() });
    return outcome;
  } finally {
    if (lockState === "held") await link.run((r) => r.eval(RELEASE, 1, lock(key), token));
  }
}
