import { spawn, type ChildProcess } from "node:child_process";
import type { APIRequestContext } from "@playwright/test";

/** A server of a spec's own, its index in memory and without background resolutions. */
export function startServer(command: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, command, {
    env: { ...process.env, IDENT_DATA_DIR: ":memory:", IDENT_CRAWL: "0", ...env },
    stdio: "ignore",
  });
}

/** Waits until the server on `port` answers `/` (at most a minute). */
export async function ready(request: APIRequestContext, port: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const ok = await request
      .get(`http://localhost:${port}/`)
      .then((r) => r.ok())
      .catch(() => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the server on ${port} did not start`);
}
