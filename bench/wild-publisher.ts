/**
 * The one address of `npm run load -- wildcard` (bench/load.ts): an HTTPS server on one loopback
 * address that answers every name under `*.wild.example` with 404 after a delay, as a wildcard host
 * (a Pages host, a CDN) answers a name it has no site for. It notes when each request arrived and how
 * many were in flight at once, so the busiest minute is counted where the requests land
 * (docs/decisions.md#budget).
 *
 * Started by {@link startWildPublisher}, in a process of its own so that the load's clients do not
 * delay its answers or its clock.
 */
import { fork } from "node:child_process";
import { createServer } from "node:https";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createTestCa } from "ident-resolver/conformance";
import { endsWithRun } from "../test/helpers/scratch";

/** Names the certificate covers (a wildcard needs two labels after it). */
export const WILD_SUFFIX = "wild.example";

type Ready = { port: number; caPem: string };
/** Arrival times in ms (this process's clock, ascending) and the most requests in flight at once. */
export type WildReport = { arrivals: number[]; peak: number };
type Message = { ready: Ready } | { reset: true } | { report: WildReport };

export type WildPublisher = Ready & {
  /** Forgets what arrived so far. */
  reset(): Promise<void>;
  report(): Promise<WildReport>;
  stop(): void;
};

/** Starts the publisher on `address` (loopback), answering after `delayMs`. */
export async function startWildPublisher(address: string, delayMs: number): Promise<WildPublisher> {
  const child = endsWithRun(
    fork(fileURLToPath(import.meta.url), [address, String(delayMs)], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    }),
  );
  const next = <K extends "ready" | "reset" | "report">(key: K) =>
    new Promise<Extract<Message, Record<K, unknown>>>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`wild publisher exited with ${code}`));
      child.once("exit", onExit);
      const onMessage = (m: Message) => {
        if (!(key in m)) return;
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(m as Extract<Message, Record<K, unknown>>);
      };
      child.on("message", onMessage);
    });
  const { ready } = await next("ready");
  return {
    ...ready,
    reset: async () => {
      const done = next("reset");
      child.send("reset");
      await done;
    },
    report: async () => {
      const done = next("report");
      child.send("report");
      return (await done).report;
    },
    stop: () => child.kill("SIGTERM"),
  };
}

async function serve(address: string, delayMs: number) {
  const ca = await createTestCa([`*.${WILD_SUFFIX}`]);
  let arrivals: number[] = [];
  let inFlight = 0;
  let peak = 0;
  const server = createServer({ key: ca.keyPem, cert: ca.certPem }, (req, res) => {
    arrivals.push(performance.now());
    peak = Math.max(peak, ++inFlight);
    res.on("close", () => inFlight--);
    req.resume();
    setTimeout(() => {
      if (!res.destroyed) res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const port = (server.address() as { port: number }).port;
  const send = (m: Message) => process.send?.(m);
  process.on("message", (m) => {
    if (m === "reset") {
      arrivals = [];
      peak = inFlight;
      send({ reset: true });
    } else if (m === "report") send({ report: { arrivals, peak } });
  });
  // The IPC channel closes when the load script ends, however it ends.
  process.on("disconnect", () => process.exit(0));
  send({ ready: { port, caPem: ca.caPem } });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [address = "127.0.3.1", delay = "50"] = process.argv.slice(2);
  await serve(address, Number(delay));
}
