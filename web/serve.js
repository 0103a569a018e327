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
import next from "next";

// Nothing leaves this machine: Next sends no telemetry from a server of ours.
process.env.NEXT_TELEMETRY_DISABLED = "1";
const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
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

// docs/decisions.md#outbound-work: lookups in progress past what the outbound queue can hold (5 ×
// IDENT_MAX_OUTBOUND fetches), requests of any kind past 8 × as many, and a client's lookups past 8
// at once (a quarter of IDENT_COLD_LOOKUPS_PER_MIN when that is more) are refused here, before Next, where each would cost memory (Next holds about 200 KB per
// request in progress) and CPU only to be refused later. Warm pages are served from the page cache
// before these counts.
const inProgress = { lookups: 0, all: 0, byClient: new Map() };
const LOOKUP = /^\/(?:api\/resolve|search|entity\/)/;
/** Lookups one client may have in progress: a quarter of its cold lookups a minute, at least 8. */
const perClient = (config) => Math.max(8, Math.ceil(config.coldLookupsPerMin / 4));

/** Answers 503 or 429 when too many requests are in progress; otherwise counts this one until it ends. */
function shed(req, res) {
  const app = globalThis.__identApp;
  if (!app) return false;
  const config = app.config;
  const lookup = LOOKUP.test(req.url);
  const client = lookup ? app.clientOf(req.headers["x-forwarded-for"] ?? null) : "";
  const mine = inProgress.byClient.get(client) ?? 0;
  const busy = inProgress.all >= config.maxOutbound * 8 || (lookup && inProgress.lookups >= config.maxOutbound * 5);
  if (!busy && !(lookup && mine >= perClient(config))) {
    inProgress.all++;
    if (lookup) {
      inProgress.lookups++;
      inProgress.byClient.set(client, mine + 1);
    }
    res.once("close", () => {
      inProgress.all--;
      if (!lookup) return;
      inProgress.lookups--;
      const left = (inProgress.byClient.get(client) ?? 1) - 1;
      if (left === 0) inProgress.byClient.delete(client);
      else inProgress.byClient.set(client, left);
    });
    return false;
  }
  app.resolver.metrics.refusals.inc({ limit: busy ? "busy" : "in_progress" });
  const retry = String(busy ? app.resolver.traffic.outbound.retryAfterS : Math.ceil(app.overLimitDelayMs / 1000));
  const message = busy
    ? `This resolver is answering as many requests as it can hold. Try again in ${retry} s.`
    : `You have ${perClient(config)} lookups in progress, as many as one client may at once. Try again when one has finished.`;
  const api = req.url.startsWith("/api/");
  // A client past its own limit waits a second for the answer, as in web/admission.ts: a loop then costs it time.
  if (busy) inTurn(answerRefusal);
  else setTimeout(answerRefusal, app.overLimitDelayMs).unref();
  return true;

  function answerRefusal() {
    if (res.destroyed) return;
    res.writeHead(busy ? 503 : 429, {
      "retry-after": retry,
      "cache-control": "no-store",
      "content-type": api ? "application/json" : "text/html; charset=utf-8",
      "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
      "x-content-type-options": "nosniff",
    });
    res.end(
      api
        ? JSON.stringify({ error: { code: busy ? "busy" : "rate_limited", message } })
        : `<!doctype html><html lang="en"><meta charset="utf-8"><title>Try again shortly</title><h1>${busy ? "This resolver is busy" : "Too many lookups at once"}</h1><p>${message}</p><p><a href="/">Back to the search</a></p></html>`,
    );
  }
}

// Requests enter Next one per turn of the event loop: a burst of them arriving together would
// otherwise be set up by Next in one go, and a page the cache could answer at once (the home page)
// would wait behind all of them (docs/decisions.md#outbound-work).
// Refusals are answered the same way: a flood of thousands of connections refused in one go held
// the thread for half a second.
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
    void handle(req, res);
  });
}

// docs/deploying.md#logs: each request has an id (a well-formed X-Request-Id from the proxy in front,
// else a new one), sent back in the response and written with every log line made while it runs.
// The context is the one lib/log.ts reads, shared through globalThis.
const requests = (globalThis.__identRequest ??= new AsyncLocalStorage());
const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** Health and metrics are answered however busy the instance is (docs/deploying.md#health). */
const OPERATIONS = /^\/(?:healthz|readyz|metrics)(?:\?|$)/;

function logRequest(req, res, id, started) {
  const log = globalThis.__identApp?.log;
  if (!log) return;
  const path = (req.url ?? "").split("?")[0];
  log.info("request", { request_id: id, method: req.method, path, status: res.statusCode, ms: Math.round(performance.now() - started) });
}

createServer((req, res) => {
  const offered = req.headers["x-request-id"];
  const id = typeof offered === "string" && REQUEST_ID.test(offered) ? offered : randomUUID();
  req.headers["x-request-id"] = id;
  res.setHeader("x-request-id", id);
  const started = performance.now();
  res.once("finish", () => logRequest(req, res, id, started));
  requests.run({ id }, () => serve(req, res));
}).listen(port, hostname, () => {
  console.log(`ident resolver on http://localhost:${port}`);
});

function serve(req, res) {
  // Only origin-form targets ("/path") go to Next; `OPTIONS *` and absolute-form targets are answered here.
  if (!req.url?.startsWith("/")) {
    const asterisk = req.method === "OPTIONS" && req.url === "*";
    res.writeHead(asterisk ? 204 : 400, asterisk ? { allow: "GET, HEAD" } : { "content-type": "text/plain; charset=utf-8" });
    return void res.end(asterisk ? undefined : "Bad request target\n");
  }
  const prior = req.headers["x-forwarded-for"];
  const hops = [Array.isArray(prior) ? prior.join(", ") : prior, req.socket.remoteAddress].filter(Boolean);
  req.headers["x-forwarded-for"] = hops.join(", ");
  // Warm entity and lookup pages come from the page cache (web/page-cache.ts) once the app has made
  // it (web/server.ts); a page it cannot vouch for is rendered by Next as usual.
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

// SIGTERM ends the process normally, so that `--cpu-prof` (npm run load with LOAD_PROF=1) writes its profile.
process.on("SIGTERM", () => process.exit(0));
