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

export function connectRedis(url: string, options: FleetLinkOptions = {}): FleetLink {
  const log = options.log ?? console.error;
  const tripMs = options.tripMs ?? 2000;
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 500,
    connectTimeout: 1000,
    // Reconnect for ever, at most every 2 s.
    retryStrategy: (times) => Math.min(100 * times, 2000),
  });
  let down = false;
  let trippedUntil = 0;
  let failures = 0;
  const wentDown = (why: string) => {
    if (down) return;
    down = true;
    log(`redis: ${why}; this instance uses its own cache and limits until Redis answers again`);
  };
  redis.on("error", (err: Error) => wentDown(`unreachable (${err.message})`));
  redis.on("close", () => wentDown("connection closed"));
  const cameBack = () => {
    trippedUntil = 0;
    if (!down) return;
    down = false;
    log("redis: answering again; the cache and the limits are shared again");
  };
  redis.on("ready", cameBack);

  const usable = () => redis.status === "ready" && Date.now() >= trippedUntil;
  /** Resolves when the connection is ready, or after `ms`. */
  const readyWithin = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        redis.off("ready", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      redis.once("ready", done);
    });
  return {
    usable,
    async run(command) {
      if (!usable()) return null;
      try {
        return await command(redis);
      } catch (err) {
        failures++;
        trippedUntil = Date.now() + tripMs;
        wentDown(`a command failed (${err instanceof Error ? err.message : String(err)})`);
        // A command that failed on a live connection (a timeout) leaves the link down until the next PING answers.
        setTimeout(() => {
          redis.ping().then(
            () => redis.status === "ready" && cameBack(),
            () => undefined,
          );
        }, tripMs).unref();
        return null;
      }
    },
    get failures() {
      return failures;
    },
    async ping() {
      // Two chances: a connection still being made at start, or an answer whose timeout fired first
      // because the event loop was held (a route's first load), is not Redis being away.
      for (let attempt = 0; attempt < 2; attempt++) {
        if (redis.status !== "ready") await readyWithin(500);
        try {
          if (redis.status === "ready" && (await redis.ping()) === "PONG") return true;
        } catch {
          // timed out or refused: the second chance, or false
        }
      }
      return false;
    },
    async close() {
      redis.disconnect();
    },
  };
}
