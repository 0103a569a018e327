/**
 * What a warm answer was made from, worked out once (docs/decisions.md#page-cache): the resolver's
 * answer from the cache alone, kept as a digest, reused while the document cache's generation reads
 * the same and the clock is before the earliest time that answer stands until. The page cache and the
 * API's warm answers (web/api.ts) both key on it.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { MEMORY_CAPS } from "./memory-caps";

/** What an answer shows, as text, and until when (ms) that text stands unless the generation moves. */
export type Version = { text: string; until: number };

export type VersionOptions<T> = {
  /** The version of `input` now; null when it is not all digests (a document not cached, a refresh). */
  version(input: T): Promise<Version | string | null>;
  /**
   * A number that moves whenever anything the version of `input` is made from changes; the same
   * number always for a version that stands on its `until` alone (one read from the index).
   */
  generation?(input: T): number;
  /** Clock, in ms. @default Date.now */
  now?(): number;
  /** Keys remembered. @default MEMORY_CAPS.versions (web/memory-caps.ts) */
  max?: number;
};

/** How long a version being worked out is shared with the requests that come meanwhile. */
export const SHARED_MS = 1_000;

/** The digest of the version of `input`, kept under `key`, now (equal digests are equal answers), or null. */
export function createVersions<T>(options: VersionOptions<T>): (key: string, input: T) => Promise<string | null> {
  const now = options.now ?? Date.now;
  const digests = new LRUCache<string, { digest: string; generation: number; until: number; begun: number }>({
    max: options.max ?? MEMORY_CAPS.versions.cap,
  });
  /** Versions being worked out, by key: the requests that come meanwhile wait for the same one. */
  const working = new Map<string, { generation: number; since: number; digest: Promise<string | null> }>();
  /** Counts the versions begun: of two worked out at once, the one begun later is kept. */
  let begun = 0;
  return async (key, input) => {
    const generation = options.generation?.(input);
    if (generation === undefined) return digestOf(options, input);
    const kept = digests.get(key);
    if (kept && kept.generation === generation && now() < kept.until) return kept.digest;
    // Shared while young: a read that hangs (a stuck connection) holds the requests of its first
    // second, not every later one.
    const shared = working.get(key);
    if (shared?.generation === generation && now() - shared.since < SHARED_MS) return shared.digest;
    const order = ++begun;
    const digest = digestOf(options, input, (v, d) => {
      // Read before the version was worked out: a change meanwhile makes the next read work it out
      // again. One that hung past SHARED_MS and ends after a later one was kept is not kept over it.
      const newer = digests.peek(key);
      if (typeof v !== "string" && !(newer && newer.begun > order))
        digests.set(key, { digest: d, generation, until: v.until, begun: order });
    }).finally(() => {
      if (working.get(key)?.digest === digest) working.delete(key);
    });
    working.set(key, { generation, since: now(), digest });
    return digest;
  };
}

/** The digest of `input`'s version now, or null; `keep` is handed a version worked out. */
async function digestOf<T>(
  options: VersionOptions<T>,
  input: T,
  keep?: (v: Version | string, digest: string) => void,
): Promise<string | null> {
  // A version that cannot be worked out (it throws, even at once) is none: the answer is made afresh.
  const v = await Promise.resolve()
    .then(() => options.version(input))
    .catch(() => null);
  if (v === null) return null;
  const digest = createHash("sha256")
    .update(typeof v === "string" ? v : v.text)
    .digest("base64");
  keep?.(v, digest);
  return digest;
}
