/**
 * The operators' listener (docs/deploying.md#metrics): `/metrics` as Prometheus text on
 * `IDENT_METRICS_ADDR` (127.0.0.1:9464 unless set; `off` for none), never on the public port, where
 * anyone could poll it in a loop. An address already in use is logged, and the app serves on.
 */
import { createServer, type Server } from "node:http";
import type { Logger } from "ident-resolver/setup";
import { FRONT_HEADERS } from "./front";

export type OperationsDeps = {
  addr: { host: string; port: number } | null;
  /** The metrics as text, with their content type. */
  metrics(): Promise<{ text: string; contentType: string }>;
  log: Logger;
};

/** Starts the listener; resolves to it once it listens, or to null when off or the address cannot be had. */
export function startOperations(deps: OperationsDeps): Promise<Server | null> {
  const { addr, log } = deps;
  if (!addr) return Promise.resolve(null);
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    const headers = Object.assign({}, FRONT_HEADERS, { "Cache-Control": "no-store" });
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, Object.assign(headers, { "Content-Type": "text/plain; charset=utf-8" }));
      return void res.end("Only GET /metrics is answered here.\n");
    }
    deps.metrics().then(
      ({ text, contentType }) => {
        res.writeHead(200, Object.assign(headers, { "Content-Type": contentType }));
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (err: unknown) => {
        log.error(`metrics: ${err instanceof Error ? err.message : String(err)}`);
        res.writeHead(503, Object.assign(headers, { "Content-Type": "text/plain; charset=utf-8" }));
        res.end("The metrics could not be read just now.\n");
      },
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  return new Promise((resolve) => {
    server.once("error", (err: NodeJS.ErrnoException) => {
      log.warn(`metrics: cannot listen on ${addr.host}:${addr.port} (${err.code ?? err.message}); /metrics is not served by this instance`);
      resolve(null);
    });
    server.listen(addr.port, addr.host, () => {
      server.unref();
      resolve(server);
    });
  });
}
