import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { startRedis } from "./redis";

/** Whether something answers on the loopback `port`. */
const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

describe("the tests' Redis (test/helpers/redis.ts)", () => {
  it("stop() returns for a server that already died of a signal (killed from outside, as the OOM killer would)", async () => {
    const redis = await startRedis();
    expect(await answers(redis.port)).toBe(true);
    const pid = redis.pid();
    if (pid === undefined) throw new Error("no pid for a running Redis");
    process.kill(pid, "SIGKILL");
    await expect.poll(() => answers(redis.port)).toBe(false);
    // Its end seen here too (its "exit" emitted) before stop() is asked.
    await new Promise((r) => setTimeout(r, 500));
    // Before, stop() waited for an "exit" that had already been: for ever.
    const stopped = await Promise.race([
      redis.stop().then(() => "stopped"),
      new Promise((r) => setTimeout(() => r("still waiting after 5 s"), 5000)),
    ]);
    expect(stopped).toBe("stopped");
  });
});
