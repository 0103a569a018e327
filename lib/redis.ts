/**
 * The one connection an instance keeps to Redis, when `IDENT_REDIS_URL` is set
 * (docs/deploying.md#redis). Redis is an accelerator, never a dependency: every command may fail,
 * and every caller has a local answer to fall back on (docs/deploying.md#when-a-part-fails).
 *
 * - Commands never queue while Redis is away (`enableOfflineQueue: false`): they fail at once.
 * - A command slower than `commandTimeoutMs` fails, and trips the link: for `tripMs` nothing is
 *   sent, so a slow Redis costs a lookup one timeout, not one per document.
 * - The client reconnects by itself for ever; the link says once that Redis is gone and once that
 *   it is back.
 */
import { Redis } from "ioredis";

export type FleetLink = {
  /** Whether commands are worth sending now (connected and not tripped). */
  usable(): boolean;
  /** Runs `command` when the link is usable; null when it is not or the command fails (then the link trips). */
  run<T>(command: (redis: Redis) => Promise<T>): Promise<T | null>;
  /** Commands that failed or timed out since start (for /metrics). */
  readonly failures: number;
  /** Whether Redis answers a PING (for /readyz), given a second chance. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
};

export type FleetLinkOptions = {
  log?: (line: string) => void;
  /** @default 500 ms */
  commandTimeoutMs?: number;
  /** How long a failed command keeps the link from sending more. @default 2 s */
  tripMs?: number;
};

/** Keys of every kind live under one prefix, so one Redis can serve other software too. */
export const KEY_PREFIX = "ident:";

/** What a link keeps: its client, whether Redis is down, until when it rests after a failure, and how many failed. */
type Link = { redis: Redis; log: (line: string) => void; tripMs: number; down: boolean; trippedUntil: number; failures: number };

export function connectRedis(url: string, options: FleetLinkOptions = {}): FleetLink {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 500,
    connectTimeout: 1000,
    // Reconnect for ever, at most every 2 s.
    retryStrategy: (times) => Math.min(100 * times, 2000),
  });
  const l: Link = { redis, log: options.log ?? console.error, tripMs: options.tripMs ?? 2000, down: false, trippedUntil: 0, failures: 0 };
  redis.on("error", (err: Error) => wentDown(l, `unreachable (${err.message})`));
  redis.on("close", () => wentDown(l, "connection closed"));
  redis.on("ready", () => cameBack(l));
  return {
    usable: () => usable(l),
    run: (command) => run(l, command),
    get failures() {
      return l.failures;
    },
    ping: () => ping(l),
    async close() {
      redis.disconnect();
    },
  };
}

function wentDown(l: Link, why: string) {
  if (l.down) return;
  l.down = true;
  l.log(`redis: ${why}; this instance uses its own cache and limits until Redis answers again`);
}

function cameBack(l: Link) {
  l.trippedUntil = 0;
  if (!l.down) return;
  l.down = false;
  l.log("redis: answering again; the cache and the limits are shared again");
}

const usable = (l: Link) => l.redis.status === "ready" && Date.now() >= l.trippedUntil;

/** Runs `command` when the link is usable; null when it is not or the command fails (then the link rests). */
async function run<T>(l: Link, command: (redis: Redis) => Promise<T>): Promise<T | null> {
  const { redis } = l;
  if (!usable(l)) return null;
  try {
    return await command(redis);
  } catch (err) {
    l.failures++;
    l.trippedUntil = Date.now() + l.tripMs;
    wentDown(l, `a command failed (${err instanceof Error ? err.message : String(err)})`);
    // A command that failed on a live connection (a timeout) leaves the link down until the next PING answers.
    setTimeout(() => {
      redis.ping().then(
        () => redis.status === "ready" && cameBack(l),
        () => undefined,
      );
    }, l.tripMs).unref();
    return null;
  }
}

/** Resolves when the connection is ready, or after `ms`. */
function readyWithin(redis: Redis, ms: number) {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off("ready", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once("ready", done);
  });
}

async function ping(l: Link): Promise<boolean> {
  const { redis } = l;
  // Two chances: a connection still being made at start, or an answer whose timeout fired first
  // because the event loop was held (a route's first load), is not Redis being away.
  for (let attempt = 0; attempt < 2; attempt++) {
    if (redis.status !== "ready") await readyWithin(redis, 500);
    try {
      if (redis.status === "ready" && (await redis.ping()) === "PONG") return true;
    } catch {
      // timed out or refused: the second chance, or false
    }
  }
  return false;
}
