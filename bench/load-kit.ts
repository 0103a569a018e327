/**
 * What `npm run load`'s runs share (bench/load.ts, bench/load-store.ts): starting the built app on a
 * fresh embedded index, plain HTTP clients that never pool unless told, and readings of the app's
 * process (RSS, descriptors, sockets, CPU, its own /metrics on IDENT_METRICS_ADDR).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { Agent, request } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SERVER_NODE_FLAGS } from "../scripts/server-flags.js";
import { endsWithRun, scratchDir } from "../test/helpers/scratch";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))] ?? NaN;

export type App = { pid: number; port: number; child: ChildProcess };

/**
 * `npm start` on `port` with `env` over the defaults below, once it answers `/` and is warm. `launcher`
 * runs it through a command that ends by exec-ing its arguments (so the app keeps the launcher's pid).
 */
export async function startApp(
  port: number,
  env: Record<string, string>,
  stderr?: (chunk: string) => void,
  launcher: string[] = [],
): Promise<App> {
  const argv = [
    process.execPath,
    ...(process.env.LOAD_PROF ? ["--cpu-prof", "--cpu-prof-dir=/tmp/prof"] : []),
    ...SERVER_NODE_FLAGS,
    path.join(root, "web", "serve.js"),
  ];
  const [command = process.execPath, ...args] = [...launcher, ...argv];
  const child = endsWithRun(
    spawn(command, args, {
      cwd: root,
      stdio: ["ignore", "ignore", stderr ? "pipe" : "inherit"],
      // A fresh embedded index per app, as a first start would have.
      env: {
        ...process.env,
        IDENT_LOG_LEVEL: "warn",
        PORT: String(port),
        NODE_ENV: "production",
        IDENT_DATA_DIR: path.join(scratchDir("ident-load-"), "data"),
        // The storms measure the lookups they send; discovery would add its own background work.
        IDENT_CRAWL: "0",
        // docs/deploying.md#metrics: the operators' listener, beside the app's own port.
        IDENT_METRICS_ADDR: `127.0.0.1:${metricsPort(port)}`,
        ...env,
      },
    }),
  );
  child.stderr?.setEncoding("utf8");
  if (stderr) child.stderr?.on("data", stderr);
  for (let i = 0; i < 300; i++) {
    if ((await get(port, "/", {}, 2000)).status === 200) break;
    await sleep(200);
  }
  // Warm: every module a run uses is loaded before the figures at rest are taken.
  for (let i = 0; i < 20; i++) await get(port, "/", {}, 2000);
  await get(port, "/api/resolve?q=minimal.test", {}, 10_000);
  await get(port, "/entity/minimal.test", {}, 10_000);
  await get(port, "/api/resolve?q=%25", {}, 10_000);
  return { pid: child.pid ?? 0, port, child };
}

export async function stopApp(app: App) {
  const exited = new Promise((r) => app.child.once("exit", r));
  app.child.kill("SIGTERM");
  await Promise.race([exited, sleep(5000)]);
}

export function get(
  port: number,
  target: string,
  headers: Record<string, string>,
  timeoutMs = 60_000,
  agent: Agent | false = false,
  localAddress?: string,
): Promise<{ status: number; ms: number; error?: string }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const from = localAddress ? { localAddress } : {};
    const req = request({ host: "127.0.0.1", port, path: target, headers, timeout: timeoutMs, agent, ...from }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ status: 0, ms: performance.now() - t0, error: err.code ?? err.message }));
    req.end();
  });
}

/** `n` reads of `/` one after another from 127.0.0.2, in a process of its own (its own descriptors): each one's status, time and error. */
export function readerProcess(port: number, n: number): Promise<{ status: number; ms: number; error?: string }[]> {
  const script = `
    const { request } = require("node:http");
    const one = () => new Promise((resolve) => {
      const t0 = performance.now();
      const req = request({ host: "127.0.0.1", port: ${port}, path: "/", localAddress: "127.0.0.2", agent: false, timeout: 10000 }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode, ms: performance.now() - t0 }));
      });
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", (e) => resolve({ status: 0, ms: performance.now() - t0, error: e.code || e.message }));
      req.end();
    });
    (async () => { const out = []; for (let i = 0; i < ${n}; i++) out.push(await one()); console.log(JSON.stringify(out)); })();`;
  return new Promise((resolve) => {
    let out = "";
    const child = endsWithRun(spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] }));
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (c: string) => (out += c));
    child.on("exit", () => resolve(out.trim() ? (JSON.parse(out) as { status: number; ms: number; error?: string }[]) : []));
  });
}

/** A POST declaring `headers` that sends `bytes` of body as fast as the server takes them (or until it answers); its status. */
export function post(port: number, target: string, headers: Record<string, string>, bytes: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: target, method: "POST", headers, agent: false, timeout: 60_000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      req.destroy();
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolve(0));
    const chunk = Buffer.alloc(64 * 1024);
    let sent = 0;
    const more = () => {
      while (sent < bytes && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", more);
      }
      if (!req.destroyed) req.end();
    };
    more();
  });
}

/** A GET of the API whose refusal, when it is one, is named: its body's `error.refused` (docs/architecture.md#traffic). */
export function lookup(
  port: number,
  target: string,
  headers: Record<string, string>,
  agent: Agent,
): Promise<{ status: number; refused: string }> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: target, headers, timeout: 30_000, agent }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (text.length < 4096) text += chunk;
      });
      res.on("end", () => {
        let refused = "";
        if ((res.statusCode ?? 0) >= 400) {
          try {
            refused = String((JSON.parse(text) as { error?: { refused?: unknown } }).error?.refused ?? "");
          } catch {
            // not JSON
          }
        }
        resolve({ status: res.statusCode ?? 0, refused });
      });
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolve({ status: 0, refused: "" }));
    req.end();
  });
}

/**
 * The app's own event-loop delay since the last reading, from its `/metrics` (prom-client resets the
 * histogram on each reading): how long work on the page thread kept a request waiting, apart from
 * the time the probe's own process waited for a core on this shared machine.
 */
export function loopDelay(port: number): Promise<{ p99: number; max: number }> {
  return scrape(port).then((text) => {
    // The histogram times a 10 ms timer: what it holds past those 10 ms is the delay.
    const read = (name: string) => Math.max(0, metric(text, `ident_process_nodejs_eventloop_lag_${name}_seconds`) * 1000 - 10);
    return { p99: read("p99"), max: read("max") };
  });
}

/** Where an app on `port` answers /metrics (IDENT_METRICS_ADDR). */
export const metricsPort = (port: number) => port + 6000;

/** The /metrics text of the app on `port`, or "" when it does not answer. */
export function scrape(port: number): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port: metricsPort(port), path: "/metrics", agent: false, timeout: 30_000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve(text));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolve(""));
    req.end();
  });
}

/** One unlabelled sample of a /metrics text, or NaN. */
export const metric = (text: string, name: string) => Number(new RegExp(`^${name}\\S* (\\S+)$`, "m").exec(text)?.[1]);

export const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
/** The RSS of the app's embedded engine, a child process of its own (docs/decisions.md#memory). */
export const engineRssMb = (pid: number) => {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) {
      try {
        if (readFileSync(`/proc/${child}/cmdline`, "utf8").includes("pglite-engine")) total += rssMb(Number(child));
      } catch {
        // gone meanwhile
      }
    }
  }
  return total;
};
export const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
export const cpuS = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(f[11]) + Number(f[12])) / 100;
};
/** Sockets of process `pid` connected or connecting to `port`: its descriptors' inodes in /proc/net/tcp. */
export function socketsTo(pid: number, port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m?.[1]) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  // By inode: while sockets close, a read of /proc/net/tcp may list one of them twice (seen: 67 and 69
  // rows for 64 sockets, the app counting 64).
  const open = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      const inode = f[9] ?? "";
      if (f[2]?.endsWith(`:${hex}`) && (f[3] === "01" || f[3] === "02") && inodes.has(inode)) open.add(inode);
    }
  }
  return open.size;
}

/**
 * Times `GET target` (`/` unless told) every 25 ms (enough samples for a p95 over a run of a second) from a process of its own, so that the load this one generates does not
 * delay the measurement; its latencies come back when it is stopped.
 */
export function probe(port: number, target = "/", headers: Record<string, string> = {}): () => Promise<number[]> {
  const script = `
    const http = require("node:http");
    const times = [];
    let running = true;
    process.on("message", () => { running = false; });
    (async () => {
      while (running) {
        const t0 = performance.now();
        await new Promise((resolve) => {
          const req = http.get({ host: "127.0.0.1", port: ${port}, path: ${JSON.stringify(target)}, headers: ${JSON.stringify(headers)}, agent: false, timeout: 30000 }, (res) => {
            res.resume();
            res.on("end", resolve);
          });
          req.on("timeout", () => req.destroy());
          req.on("error", resolve);
        });
        times.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 25));
      }
      process.send(times, () => process.exit(0));
    })();`;
  const child = endsWithRun(spawn(process.execPath, ["-e", script], { stdio: ["ignore", "ignore", "inherit", "ipc"] }));
  return () =>
    new Promise((resolve) => {
      child.once("message", (times) => resolve(times as number[]));
      child.send("stop");
    });
}

/**
 * A bare Node server ("ok" to every request), in a process of its own, timed beside the app: its p95
 * during a run is what the machine alone adds (2 cores shared with the load, the publishers and the app's threads).
 */
export const CONTROL_PORT = 3409;
const control = endsWithRun(
  spawn(process.execPath, ["-e", `require("node:http").createServer((q, s) => s.end("ok")).listen(${CONTROL_PORT}, "127.0.0.1")`], {
    stdio: "ignore",
  }),
);
// Not waited for: held, it kept every bench that imports this file from exiting once done. Stopped
// however this script ends, a failed run included (endsWithRun).
control.unref();

/** Times `/` of the app and the bare server together; the stop gives both p95s. */
export function probes(port: number): () => Promise<{ home: number; bare: number }> {
  const stopHome = probe(port);
  const stopBare = probe(CONTROL_PORT);
  return async () => {
    const [home, bare] = await Promise.all([stopHome(), stopBare()]);
    return { home: p95(home), bare: p95(bare) };
  };
}

/** Samples the app every 50 ms and times `/` (and the bare server) every 25 ms until stopped. */
export async function watch(app: App, upstreamPort: number) {
  await loopDelay(app.port);
  const peak = { rss: rssMb(app.pid), engineRss: engineRssMb(app.pid), fds: fds(app.pid), sockets: 0 };
  const rest = { rss: peak.rss, engineRss: peak.engineRss, cpu: cpuS(app.pid) };
  const stopProbes = probes(app.port);
  const sampler = setInterval(() => {
    try {
      peak.rss = Math.max(peak.rss, rssMb(app.pid));
      peak.engineRss = Math.max(peak.engineRss, engineRssMb(app.pid));
      peak.fds = Math.max(peak.fds, fds(app.pid));
      peak.sockets = Math.max(peak.sockets, socketsTo(app.pid, upstreamPort));
    } catch {
      // the process is gone
    }
  }, 50);
  return async () => {
    clearInterval(sampler);
    const { home, bare } = await stopProbes();
    const delay = await loopDelay(app.port);
    return {
      ...peak,
      restRss: rest.rss,
      restEngineRss: rest.engineRss,
      cpu: cpuS(app.pid) - rest.cpu,
      homeP95: home,
      bareP95: bare,
      delay,
    };
  };
}

/** The p95 of `/` over 4 s with nothing else running, measured as during a run, and the app's event-loop delay meanwhile. */
export async function homeAtRest(port: number) {
  await loopDelay(port);
  const stop = probes(port);
  await sleep(4000);
  const { home, bare } = await stop();
  return { p95: home, bareP95: bare, delay: await loopDelay(port) };
}

export type Rest = Awaited<ReturnType<typeof homeAtRest>>;
export type Measured = Awaited<ReturnType<Awaited<ReturnType<typeof watch>>>>;
/** `/`'s p95 during a run beside its p95 at rest, the bare server's beside it, and the app's event-loop delay beside its delay at rest. */
export const home = (m: Measured, rest: Rest, goal = "") =>
  `/ p95 ${m.homeP95.toFixed(0)} ms (at rest ${rest.p95.toFixed(0)} ms${goal}); ` +
  `a bare Node server's p95 meanwhile ${m.bareP95.toFixed(0)} ms (at rest ${rest.bareP95.toFixed(0)} ms); ` +
  `the app's event-loop delay p99 ${m.delay.p99.toFixed(0)} ms, max ${m.delay.max.toFixed(0)} ms (at rest ${rest.delay.p99.toFixed(0)} / ${rest.delay.max.toFixed(0)} ms)`;

/** The engine's RSS beside the app's, and the two together. */
export const engine = (m: { restEngineRss: number; engineRss: number; restRss: number; rss: number }) =>
  `[engine ${m.restEngineRss.toFixed(0)} → ${m.engineRss.toFixed(0)} MB; app and engine at peak ≤ ${(m.rss + m.engineRss).toFixed(0)} MB]`;

export function counts(statuses: number[]) {
  const by = new Map<number, number>();
  for (const s of statuses) by.set(s, (by.get(s) ?? 0) + 1);
  return [...by].map(([s, n]) => `${n}× ${s || "no answer"}`).join(", ");
}

/** `n` requests, at most `concurrency` at a time. */
export async function many(n: number, concurrency: number, one: (i: number) => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      for (let i = next++; i < n; i = next++) out.push(await one(i));
    }),
  );
  return out;
}
