#!/usr/bin/env node
// `npm start`: the production server. A thin wrapper around Next so that X-Forwarded-For always ends
// with the address of the socket this server accepted: the rightmost hop is one we wrote, and a
// client cannot choose its rate-limit key (docs/decisions.md#caching) by sending the header itself. Next alone keeps
// a client-sent X-Forwarded-For as it is. It also puts the app's page cache in front of Next.
import { AsyncLocalStorage } from "node:async_hooks";
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { setImmediate, setTimeout } from "node:timers";
import path from "node:path";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";
import next from "next";

// docs/decisions.md#memory: while garbage comes fast V8 grows its heap to several times what a
// collection keeps: 10,000 cold pages took RSS 284 MB up, little of it live. Grown by 20 % at a time
// it stays near what is live (+104 MB, the caches' bounds being 96 MB); 4,000 cold pages took 7 % longer (one run).
v8.setFlagsFromString("--heap-growing-percent=20");

// Nothing leaves this machine: Next sends no telemetry from a server of ours.
process.env.NEXT_TELEMETRY_DISABLED = "1";
const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// The app's folder, wherever it is started from: what it reads at run time (the built styles' hashes,
// web/security-headers.ts; the preview font) is found from here.
process.chdir(dir);
const port = Number(process.env.PORT || 3000);
const hostname = process.env.HOSTNAME ?? "0.0.0.0";

// docs/decisions.md#configuration: a bad configuration stops the server at start, naming every bad variable. Checked in a
// child process, so this server runs without TypeScript loader hooks (they would slow every import()).
const check = spawnSync(process.execPath, ["--import", "tsx", path.join(dir, "web", "check-config.ts")], { stdio: "inherit" });
if (check.status !== 0) process.exit(check.status ?? 1);

// Next builds each request's own URL from this host name, and treats a proxy rewrite whose origin
// differs from it as external, proxying the request to itself. The proxy's URLs name loopback hosts
// "localhost", so Next is told "localhost" whatever address this server is bound to.
const app = next({ dev: false, dir, hostname: "localhost", port });
const handle = app.getRequestHandler();
await app.prepare();
// The app (web/app.ts) is built by instrumentation.ts as Next starts; the server guards itself with
// it (web/front.ts), so it waits for it (at most a minute) before it listens.
for (let waited = 0; !globalThis.__identApp && waited < 60_000; waited += 20) await new Promise((r) => setTimeout(r, 20));

// docs/architecture.md#traffic: requests past what this instance may hold in progress, and a client's
// lookups past its own, are refused here, before Next (web/shed.ts). Warm pages are served from the
// page cache before these counts.
function shed(req, res) {
  const refused = globalThis.__identApp?.shed(req, res);
  if (!refused) return false;
  // A client past its own limit waits for its answer: a loop then costs it time. Others are answered in turn.
  if (refused.delayMs > 0) setTimeout(refused.write, refused.delayMs).unref();
  else inTurn(refused.write);
  return true;
}

// Requests enter Next one per turn of the event loop, and refusals are written the same way, so a
// burst is never set up (or refused) in one go while a page the cache could answer at once waits
// behind it (docs/decisions.md#outbound-work, "In front of Next").
const turns = [];
function inTurn(work) {
  turns.push(work);
  if (turns.length === 1) setImmediate(takeTurn);
}
function takeTurn() {
  const next = turns.shift();
  if (turns.length > 0) setImmediate(takeTurn);
  next?.();
}
// The API's lookups are answered without Next (web/api.ts), which cost the thread more than the lookup.
function enter(req, res) {
  inTurn(() => {
    if (res.destroyed || globalThis.__identApp?.api(req, res)) return;
    // Compression, and read pages without the framework's script (web/script-free.ts).
    globalThis.__identApp?.aroundNext(req, res);
    void handle(req, res);
  });
}

// docs/deploying.md#logs: each request has an id (a well-formed X-Request-Id from the proxy in front,
// else a new one), sent back in the response and written with every log line made while it runs.
// The context is the one lib/log.ts reads, shared through globalThis.
const requests = (globalThis.__identRequest ??= new AsyncLocalStorage());
const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** Health and readiness are answered however busy the instance is (docs/deploying.md#health). */
const OPERATIONS = /^\/(?:healthz|readyz)(?:\?|$)/;

function logRequest(req, res, id, started) {
  const log = globalThis.__identApp?.log;
  if (!log) return;
  const path = (req.url ?? "").split("?")[0];
  log.info("request", { request_id: id, method: req.method, path, status: res.statusCode, ms: Math.round(performance.now() - started) });
}

// The headers and request timeouts (web/front.ts, guardServer) checked every second, not every 30.
const server = createServer({ connectionsCheckingInterval: 1000 }, (req, res) => {
  const offered = req.headers["x-request-id"];
  const id = typeof offered === "string" && REQUEST_ID.test(offered) ? offered : randomUUID();
  req.headers["x-request-id"] = id;
  res.setHeader("x-request-id", id);
  const started = performance.now();
  res.once("finish", () => logRequest(req, res, id, started));
  requests.run({ id }, () => serve(req, res));
})
  // A request Node's parser refuses is answered with the same headers as every other (web/front.ts).
  .on("clientError", (err, socket) => {
    const answer = globalThis.__identApp?.clientErrorAnswer(err.code, err.rawPacket);
    // As Node's own handler: answered unless a response on this connection has already begun.
    if (answer && socket.writable && !socket._httpMessage?.headersSent) socket.end(answer);
    else socket.destroy();
  });
// docs/deploying.md#staying-up-in-public: timeouts, and connections per client.
globalThis.__identApp?.guard(server);
server.listen(port, hostname, () => {
  console.log(`ident resolver on http://localhost:${port}`);
});

function serve(req, res) {
  // Only origin-form targets ("/path") go to Next; `OPTIONS *` and absolute-form targets are answered here.
  if (!req.url?.startsWith("/")) {
    for (const [name, value] of Object.entries(globalThis.__identApp?.frontHeaders ?? {})) res.setHeader(name, value);
    const asterisk = req.method === "OPTIONS" && req.url === "*";
    res.writeHead(asterisk ? 204 : 400, asterisk ? { allow: "GET, HEAD" } : { "content-type": "text/plain; charset=utf-8" });
    return void res.end(asterisk ? undefined : "Bad request target\n");
  }
  // The security headers on every answer; a malformed path, a Server Action or a body no route takes
  // is answered there (web/front.ts).
  if (globalThis.__identApp?.front(req, res)) return;
  const prior = req.headers["x-forwarded-for"];
  const hops = [Array.isArray(prior) ? prior.join(", ") : prior, req.socket.remoteAddress].filter(Boolean);
  req.headers["x-forwarded-for"] = hops.join(", ");
  // Warm entity and lookup pages come from the page cache (web/page-cache.ts) once the app has made
  // it (web/app.ts); a page it cannot vouch for is rendered by Next as usual.
  const render = () => {
    if (OPERATIONS.test(req.url) || !shed(req, res)) enter(req, res);
  };
  const pages = globalThis.__identApp?.pages;
  if (!pages) return render();
  pages.serve(req, res, render).catch((error) => {
    // A fault of the page cache never leaves a request hanging: Next answers it, or it is closed.
    const log = globalThis.__identApp?.log;
    if (log) log.error(`page cache: ${error instanceof Error ? error.message : String(error)}`);
    else console.error("page cache:", error);
    if (!res.headersSent) render();
    else res.destroy();
  });
}

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
  const log = globalThis.__identApp?.log;
  log?.info(`stopping on ${signal}: ${inProgress} requests in progress`);
  server.close();
  server.closeIdleConnections();
  for (let waited = 0; inProgress > 0 && waited < 20_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  server.closeAllConnections();
  try {
    await globalThis.__identApp?.close();
  } catch (err) {
    log?.error(`stopping: ${err instanceof Error ? err.message : String(err)}`);
  }
  log?.info("stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void stop("SIGTERM"));
process.on("SIGINT", () => void stop("SIGINT"));
