/**
 * An instance's notices in a process of its own (./notices-child.ts), driven over IPC, for the tests
 * and the bench that kill one or run two (test/integration/notices-killed.test.ts, bench/notices.ts).
 */
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import type { StoreLocation } from "ident-resolver/store";
import type { Hooks } from "../network/hooks";
import type { FromChild, ToChild } from "./notices-child";

export type { FromChild, ToChild };
const CHILD = path.join(import.meta.dirname, "notices-child.ts");

export type NoticesInstance = {
  process: ChildProcess;
  ask(m: ToChild): Promise<FromChild>;
  /** Records `n` checks of `domain`, each turning its one credential (verified when `from + i` is even); when each was done. */
  record(domain: string, n: number, from?: number): Promise<number[]>;
  /** Stops it as an operator does, and waits for its exit. */
  stop(): Promise<void>;
  /** SIGKILL, and waits for its exit. */
  kill(): Promise<void>;
};

/** Starts an instance on `where`, its callbacks sent to `hooks` (whose CA is in `caFile`). */
export async function spawnNotices(
  where: StoreLocation,
  hooks: Hooks,
  caFile: string,
  execArgv: readonly string[] = [],
): Promise<NoticesInstance> {
  const child = fork(CHILD, [], {
    execArgv: ["--import", "tsx", ...execArgv],
    env: Object.assign({}, process.env, {
      NOTICES_STORE: JSON.stringify(where),
      NOTICES_CONNECT_TO: hooks.connectToText,
      NOTICES_CA: caFile,
    }),
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const replies: { resolve(m: FromChild): void; reject(e: Error): void }[] = [];
  child.on("message", (m: FromChild) => replies.shift()?.resolve(m));
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code) => {
      for (const r of replies.splice(0)) r.reject(new Error(`the notices' process exited (${code})`));
      resolve();
    }),
  );
  const next = () => new Promise<FromChild>((resolve, reject) => replies.push({ resolve, reject }));
  await next();
  const ask = (m: ToChild) => {
    const reply = next();
    child.send(m);
    return reply;
  };
  return {
    process: child,
    ask,
    record: async (domain, n, from = 1) => ((await ask({ do: "record", domain, n, from })) as { at: number[] }).at,
    async stop() {
      await ask({ do: "stop" }).catch(() => undefined);
      await exited;
    },
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}
