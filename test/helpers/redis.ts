/**
 * A real Redis server for tests and `npm run fleet`: Debian's redis-server, its folder a temporary
 * one, on a loopback port, nothing saved to disk; stopped and removed afterwards.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { freePort } from "./postgres";
import { endsWithRun, scratchDir } from "./scratch";

export type RedisServer = {
  url: string;
  port: number;
  /** Stops the server, as an outage would (its data, all in memory, is gone). */
  pause(): Promise<void>;
  /** Starts it again on the same port. */
  resume(): Promise<void>;
  /** Stops the process without closing its connections (SIGSTOP): a Redis that has become slow. */
  freeze(): void;
  /** Lets it run again (SIGCONT). */
  thaw(): void;
  /** The server's process id while it runs. */
  pid(): number | undefined;
  stop(): Promise<void>;
};

export const REDIS_SERVER = "/usr/bin/redis-server";

/** Answers once the server replies to PING, or throws after `ms`. */
async function answers(port: number, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
      socket.once("data", (data) => {
        socket.destroy();
        resolve(data.toString().startsWith("+PONG"));
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`redis-server on port ${port} did not answer within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startRedis(): Promise<RedisServer> {
  if (!existsSync(REDIS_SERVER)) throw new Error("redis-server is not installed (Debian's redis-server package); .ci/run installs it");
  const dir = scratchDir("ident-redis-");
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    // SIGKILL, as `halt`: a frozen (SIGSTOP) server would hold SIGTERM until thawed.
    child = endsWithRun(
      spawn(
        REDIS_SERVER,
        [
          "--port",
          String(port),
          "--bind",
          "127.0.0.1",
          "--dir",
          dir,
          "--save",
          "",
          "--appendonly",
          "no",
          "--maxmemory",
          "256mb",
          "--maxmemory-policy",
          "allkeys-lru",
        ],
        { stdio: "ignore" },
      ),
      "SIGKILL",
    );
    await answers(port);
  };
  const halt = async () => {
    const running = child;
    child = null;
    // Already ended, by itself or by a signal: its "exit" has been and will not come again.
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill("SIGKILL");
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pause: halt,
    resume: start,
    freeze: () => void child?.kill("SIGSTOP"),
    thaw: () => void child?.kill("SIGCONT"),
    pid: () => child?.pid,
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
