#!/usr/bin/env node
// `npm start`: the production server. A thin wrapper around Next so that X-Forwarded-For always ends
// with the address of the socket this server accepted: the rightmost hop is one we wrote, and a
// client cannot choose its rate-limit key (docs/decisions.md#caching) by sending the header itself. Next alone keeps
// a client-sent X-Forwarded-For as it is. It also puts the app's page cache in front of Next.
import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
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

createServer((req, res) => {
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
  const pages = globalThis.__identApp?.pages;
  if (!pages) return void handle(req, res);
  pages
    .serve(req, res, () => void handle(req, res))
    .catch((error) => {
      // A fault of the page cache never leaves a request hanging: Next answers it, or it is closed.
      console.error("page cache:", error);
      if (!res.headersSent) void handle(req, res);
      else res.destroy();
    });
}).listen(port, hostname, () => {
  console.log(`ident resolver on http://localhost:${port}`);
});
