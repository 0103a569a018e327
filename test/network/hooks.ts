/**
 * Callbacks on loopback (docs/notices.md): an HTTPS server with a CA made at start, answering every
 * name under `hooks.test` as a subscriber would, by the name's first label:
 *
 * - `hang.…` (or `hang7.…`: digits after the label are ignored): reads the request and never answers;
 * - `fail.…`: 500; `gone.…`: 410; `moved.…`: 302 elsewhere; `slow.…`: answers after `slowMs` (3 s);
 * - `deny.…`: refuses WebSub's verification (404);
 * - anything else: a subscriber that follows WebSub (§5.3: echoes `hub.challenge`) and takes every POST (204).
 *
 * Every request is kept (host, method, path, headers, body, when), for the tests and the bench.
 */
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { createTestCa } from "ident-resolver/conformance";
import type { ConnectToEntry } from "ident-resolver/node";

export type Received = { host: string; method: string; path: string; headers: IncomingMessage["headers"]; body: string; at: number };

export type Hooks = {
  port: number;
  caPem: string;
  /** `IDENT_CONNECT_TO` entries sending every host name on port 443 here. */
  connectTo: ConnectToEntry[];
  /** The same, as the variable's text. */
  connectToText: string;
  received: Received[];
  /** How long a `slow.…` host takes to answer. @default 3000 */
  slowMs: number;
  /** Waits until `count` requests matching `filter` arrived, or `timeoutMs` passed; the matching ones. */
  waitFor(filter: (r: Received) => boolean, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
};

export async function startHooks(): Promise<Hooks> {
  const ca = await createTestCa(["hooks.test", "*.hooks.test"]);
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();
  const server: Server = createServer({ cert: ca.certPem, key: ca.keyPem }, (req, res) => answer(req, res, hooks, waiters));
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const hooks: Hooks = {
    slowMs: 3000,
    port,
    caPem: ca.caPem,
    connectTo: [{ host: "", port: 443, connectHost: "127.0.0.1", connectPort: port }],
    connectToText: `:443:127.0.0.1:${port}`,
    received,
    async waitFor(filter, count, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = received.filter(filter);
        if (found.length >= count || Date.now() > until) return found;
        await new Promise<void>((resolve) => {
          const done = () => {
            waiters.delete(done);
            clearTimeout(t);
            resolve();
          };
          const t = setTimeout(done, 200);
          waiters.add(done);
        });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  return hooks;
}

function answer(req: IncomingMessage, res: ServerResponse, hooks: Hooks, waiters: Set<() => void>) {
  const { received } = hooks;
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "").toLowerCase();
    const method = req.method ?? "GET";
    const path = req.url ?? "/";
    received.push({ host, method, path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
    for (const w of [...waiters]) w();
    // The first label without its digits: `hang7.hooks.test` hangs as `hang.hooks.test` does.
    const label = (host.split(".")[0] ?? "").replace(/\d+$/, "");
    if (label === "hang") return;
    const send = (status: number, body = "") => {
      res.writeHead(status, { "content-type": "text/plain" });
      res.end(body);
    };
    if (method === "GET") {
      const challenge = new URL(path, "https://x").searchParams.get("hub.challenge");
      if (label === "deny" || challenge === null) return send(404);
      return send(200, challenge);
    }
    if (label === "fail") return send(500, "no");
    if (label === "gone") return send(410);
    if (label === "moved") {
      res.writeHead(302, { location: "https://ok.hooks.test/" });
      return res.end();
    }
    if (label === "slow") return void setTimeout(() => send(204), hooks.slowMs);
    send(204);
  });
}
