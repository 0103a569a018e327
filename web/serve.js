#!/usr/bin/env node
// `npm start`, and with --dev `npm run dev`: the app's own server, the one way every request takes
// (docs/architecture.md#one-request-one-decision). It starts Next (its production server, or its
// development server inside the same path), takes the app's request handler from the bridge
// (web/bridge.ts, web/server.ts) and listens; everything a request meets is decided in web/server.ts.
import { spawnSync } from "node:child_process";
import { createServer, ServerResponse } from "node:http";
import { setTimeout } from "node:timers";
import path from "node:path";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";
import next from "next";
import { BUILT_CHECK_CONFIG, builtFile } from "../scripts/built.js";
import { HEAP_GROWING_FLAG } from "../scripts/server-flags.js";

const dev = process.argv.includes("--dev");
// A log no one reads any more (the pipe's reader gone) is not a reason to stay up or to crash: a
// write that fails is dropped, and SIGTERM still stops the server.
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);

// docs/decisions.md#memory: while garbage comes fast V8 grows its heap to several times what a
// collection keeps: 10,000 cold pages took RSS 284 MB up, little of it live. Grown by 20 % at a time
// it stays near what is live (+104 MB, the caches' bounds being 96 MB); 4,000 cold pages took 7 % longer (one run).
v8.setFlagsFromString(HEAP_GROWING_FLAG);

// Nothing leaves this machine: Next sends no telemetry from a server of ours.
process.env.NEXT_TELEMETRY_DISABLED = "1";
const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// The app's folder, wherever it is started from: what it reads at run time (the built styles' hashes,
// web/security-headers.ts; the preview fonts) is found from here.
process.chdir(dir);
const port = Number(process.env.PORT || 3000);
const hostname = process.env.HOSTNAME ?? "0.0.0.0";

// docs/decisions.md#configuration: a bad configuration stops the server at start, naming every bad variable. Checked in a
// child process by the check `npm run build` made (docs/deploying.md#building); in a checkout edited
// since, its TypeScript through tsx, a development dependency.
const built = builtFile(dir, BUILT_CHECK_CONFIG);
const checkArgs = built ? [built] : ["--import", "tsx", path.join(dir, "web", "check-config.ts")];
const check = spawnSync(process.execPath, checkArgs, { stdio: "inherit" });
if (check.status !== 0) process.exit(check.status ?? 1);

// Next builds each request's own URL from this host name, and treats a rewrite whose origin differs
// from it as external. Loopback URLs name hosts "localhost", so Next is told "localhost" whatever
// address this server is bound to.
const nextApp = next({ dev, dir, hostname: "localhost", port, ...(dev ? { turbopack: true } : {}) });
const handle = nextApp.getRequestHandler();
await nextApp.prepare();
// The app (web/app.ts) and its handler are made by instrumentation.ts as Next starts; the server
// waits for them (at most a minute) before it listens.
const held = () => globalThis.__ident;
for (let waited = 0; !held()?.handler && waited < 60_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
const bridge = held();
if (!bridge?.handler || !bridge.app) {
  console.error("ident: the app did not start within a minute (instrumentation.ts)");
  process.exit(1);
}
const app = bridge.app;

// The headers and request timeouts (web/front.ts, guardServer) checked every second, not every 30.
const handler = bridge.handler(handle, { dev });
const server = createServer({ connectionsCheckingInterval: 1000 }, handler)
  // docs/decisions.md#methods: Node hands CONNECT to a `connect` listener and, without one, resets the
  // connection. It takes the way every request takes instead: 405 naming the route's methods (400 for
  // a host:port target), then the connection closes.
  .on("connect", (req, socket) => {
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    // Taken from the server, the socket meets none of its timeouts: closed whole once answered (a
    // client that keeps its side open would hold a descriptor), and never kept past 10 s.
    res.once("finish", () => socket.destroySoon());
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on("error", () => socket.destroy());
    handler(req, res);
  })
  // A request Node's parser refuses is answered with the same headers as every other (web/front.ts).
  .on("clientError", (err, socket) => {
    const answer = app.clientErrorAnswer(err.code, err.rawPacket);
    // As Node's own handler: answered unless a response on this connection has already begun.
    if (socket.writable && !socket._httpMessage?.headersSent) socket.end(answer);
    else socket.destroy();
  });
// Development: Next's hot reloading talks over a WebSocket on the same port.
if (dev) server.on("upgrade", nextApp.getUpgradeHandler());
// docs/deploying.md#staying-up-in-public: timeouts, and connections per client and in all.
app.guard(server);
server.listen(port, hostname, () => {
  console.log(`ident resolver on http://localhost:${port}${dev ? " (development)" : ""}`);
});

// docs/deploying.md#upgrading-without-losing-results: SIGTERM (systemd's stop) and SIGINT stop the
// instance without losing what it holds: no new connection is taken, the requests in progress are
// answered (20 s at most), then the app's own work is finished (web/app.ts, close) and the process
// ends normally (so `--cpu-prof`, npm run load with LOAD_PROF=1, writes its profile). A second
// signal ends it at once.
let inProgress = 0;
server.on("request", (_req, res) => {
  inProgress++;
  res.once("close", () => inProgress--);
});
let stopping = false;
async function stop(signal) {
  if (stopping) process.exit(1);
  stopping = true;
  app.log.info(`stopping on ${signal}: ${inProgress} requests in progress`);
  server.close();
  server.closeIdleConnections();
  for (let waited = 0; inProgress > 0 && waited < 20_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  server.closeAllConnections();
  try {
    await app.close();
  } catch (err) {
    app.log.error(`stopping: ${err instanceof Error ? err.message : String(err)}`);
  }
  app.log.info("stopped");
  if (dev) await nextApp.close();
  process.exit(0);
}
process.on("SIGTERM", () => void stop("SIGTERM"));
process.on("SIGINT", () => void stop("SIGINT"));
