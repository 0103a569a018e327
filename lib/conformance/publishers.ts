/**
 * The conformance cases' publishers on loopback (docs/library.md#conformance): one HTTPS server
 * answering every case's URLs, with a CA made at start that the resolver under test must trust, and
 * the `IDENT_CONNECT_TO`-style routes that send each host to it. Any other URL answers 404.
 */
import type { Socket } from "node:net";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { createTestCa } from "./ca.ts";
import type { ConformanceCase, Published } from "./cases.ts";

/** Where the publishers are, and how to reach them. */
export type Publishers = {
  /** The loopback port every host is served on. */
  port: number;
  /** The CA that signed the server's certificate (PEM): the resolver under test trusts it, and nothing else does. */
  caPem: string;
  /** Every host the cases use. */
  hosts: string[];
  /** `host:443:127.0.0.1:port` for each host, comma-separated: `IDENT_CONNECT_TO`, or curl's `--connect-to`, one by one. */
  connectTo: string;
  /** Requests each URL has had (`https://host/path`). */
  requests: ReadonlyMap<string, number>;
  close(): Promise<void>;
};

/** The response of one URL, as the case publishes it. */
function answer(published: Published | undefined): { status: number; type: string; body: string } {
  if (!published) return { status: 404, type: "text/plain", body: "not found" };
  const text = typeof published.body === "string";
  return {
    status: published.status ?? 200,
    type: published.contentType ?? (text ? "text/html" : "application/json"),
    body: text ? (published.body as string) : JSON.stringify(published.body ?? null),
  };
}

/** Starts the publishers of `cases`. */
export async function startPublishers(cases: readonly ConformanceCase[]): Promise<Publishers> {
  const routes = new Map<string, Published>();
  for (const c of cases) for (const [url, published] of Object.entries(c.publishers)) routes.set(url, published);
  const hosts = [...new Set([...routes.keys()].map((url) => new URL(url).hostname))].sort();
  const ca = await createTestCa(hosts);
  const sockets = new Set<Socket>();
  const requests = new Map<string, number>();
  const server: Server = createServer({ key: ca.keyPem, cert: ca.certPem }, (req, res) => {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "").toLowerCase();
    const url = `https://${host}${req.url ?? "/"}`;
    requests.set(url, (requests.get(url) ?? 0) + 1);
    const published = routes.get(url);
    // A publisher that never answers: the resolver's deadline must end it; `close` ends it here.
    if (published?.hang) return;
    const { status, type, body } = answer(published);
    res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    caPem: ca.caPem,
    hosts,
    connectTo: hosts.map((h) => `${h}:443:127.0.0.1:${port}`).join(","),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
