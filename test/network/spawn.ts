import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { scratchDir } from "../helpers/scratch";

const here = path.dirname(fileURLToPath(import.meta.url));

export type SpawnedNetwork = {
  env: { IDENT_CONNECT_TO: string; NODE_EXTRA_CA_CERTS: string };
  /** `IDENT_CONNECT_TO` sending every host to one address: short enough to type. */
  connectToOne: string;
  caPem: string;
  child: ChildProcess;
  stop(): Promise<void>;
};

/**
 * Runs the sample network in its own process (so its TLS work is not counted against the resolver
 * being measured or tested) and waits until it has written its environment.
 */
export async function spawnSampleNetwork(options: { root?: string; delayMs?: number; port?: number } = {}): Promise<SpawnedNetwork> {
  const dir = scratchDir("ident-net-");
  const envFile = path.join(dir, "env");
  const args = ["--import", "tsx", path.join(here, "server.ts"), "--write-env", envFile];
  if (options.root) args.push("--root", options.root);
  if (options.delayMs) args.push("--delay-ms", String(options.delayMs));
  if (options.port) args.push("--port", String(options.port));
  // The IPC channel closes when this process dies, however it dies, and the network then stops too.
  const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  const deadline = Date.now() + 30_000;
  while (!existsSync(envFile)) {
    if (child.exitCode !== null) throw new Error(`sample network exited with ${child.exitCode}`);
    if (Date.now() > deadline) {
      child.kill();
      throw new Error("sample network did not start within 30 s");
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const vars = Object.fromEntries(
    readFileSync(envFile, "utf8")
      .trim()
      .split("\n")
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  const env = { IDENT_CONNECT_TO: vars.IDENT_CONNECT_TO ?? "", NODE_EXTRA_CA_CERTS: vars.NODE_EXTRA_CA_CERTS ?? "" };
  return {
    env,
    connectToOne: vars.SAMPLE_CONNECT_TO_ONE ?? env.IDENT_CONNECT_TO,
    caPem: readFileSync(env.NODE_EXTRA_CA_CERTS, "utf8"),
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        rmSync(dir, { recursive: true, force: true });
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
