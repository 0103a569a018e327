import { spawn, type ChildProcess } from "node:child_process";
import { cpSync } from "node:fs";
import path from "node:path";
import type { APIRequestContext } from "@playwright/test";
import { scratchDir } from "../../test/helpers/scratch";

/** The last words each server wrote to stderr, for the message of one that does not start. */
const said = new WeakMap<ChildProcess, string>();

/**
 * A new index of a server's own: a copy of the run's migrated one (e2e/global-setup.ts) in a scratch
 * folder, which opens in under a second where a new one (even in memory) takes 5 s of a core.
 */
function newIndex(): string {
  const template = process.env.IDENT_E2E_STORE_TEMPLATE;
  if (!template) return ":memory:";
  const dataDir = path.join(scratchDir("ident-e2e-server-"), "data");
  cpSync(template, dataDir, { recursive: true });
  return dataDir;
}

/** A server of a spec's own, with a new index of its own and without background resolutions. */
export function startServer(command: string[], env: Record<string, string>): ChildProcess {
  const server = spawn(process.execPath, command, {
    env: { ...process.env, IDENT_DATA_DIR: env.IDENT_DATA_DIR ?? newIndex(), IDENT_CRAWL: "0", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  said.set(server, "");
  server.stderr?.setEncoding("utf8");
  server.stderr?.on("data", (chunk: string) => said.set(server, ((said.get(server) ?? "") + chunk).slice(-2000)));
  return server;
}

/**
 * Waits until the server on `port` answers `/`: at most 90 s, as long as the whole suite on two cores
 * may make a start take (a hook that calls this needs a longer timeout than the default 60 s). One
 * that stops, or does not answer in time, fails naming its port and what it wrote to stderr.
 */
export async function ready(request: APIRequestContext, port: number, server?: ChildProcess, host = "localhost"): Promise<void> {
  const started = Date.now();
  const words = () => (server ? `; its stderr: ${said.get(server) || "(nothing)"}` : "");
  while (Date.now() - started < 90_000) {
    if (server && server.exitCode !== null) throw new Error(`the server on ${port} stopped (exit code ${server.exitCode})${words()}`);
    const ok = await request
      .get(`http://${host}:${port}/`, { timeout: 10_000 })
      .then((r) => r.ok())
      .catch(() => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the server on ${port} did not answer / within 90 s${words()}`);
}
