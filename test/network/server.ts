/**
 * The sample network: every folder under `sample-network/` is one publisher's domain, holding the
 * exact files the resolver fetches. `site.json` in a folder describes what files cannot express
 * (status, delay, content type, redirect, compression, dripping). Served over HTTPS on loopback with
 * a CA made at start; prints the IDENT_CONNECT_TO and NODE_EXTRA_CA_CERTS a resolver needs.
 *
 * Run: `npm run sample-network [-- --port 8443] [--delay-ms 50] [--root DIR] [--write-env .sample-network/env]`
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { createSecureContext, type SecureContext } from "node:tls";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants as zlibConstants, gzipSync } from "node:zlib";
import { createTestCa } from "ident-resolver/conformance";
import { scratchDir } from "../helpers/scratch";

/** How one path of a site answers, beyond serving its file (site.json `routes`). */
export type Route = {
  status?: number;
  content_type?: string;
  headers?: Record<string, string>;
  /** Wait before sending headers. */
  delay_ms?: number;
  /** Send the body one byte every `drip_ms`. */
  drip_ms?: number;
  /** Answer 302 (or `status`) with this Location. */
  redirect?: string;
  /** gzip the body and say so. */
  gzip?: boolean;
  /** Brotli the body with a 16 MiB window and say so, whatever the client accepts. */
  brotli?: boolean;
  /** Omit Content-Length (chunked). */
  no_length?: boolean;
  /** A body of this many bytes instead of a file (a JSON string of `x`s). */
  generate_bytes?: number;
  /** Inline body instead of a file. */
  body?: string;
};

export type Site = { about?: string; routes?: Record<string, Route>; files?: Record<string, string> };

export type SampleNetworkOptions = {
  /** Folder of publisher folders. @default sample-network/ at the project root */
  root?: string;
  /** @default 0 (any free port) */
  port?: number;
  /** @default 127.0.0.1 */
  host?: string;
  /** Delay added to every response, for benchmarks. @default 0 */
  delayMs?: number;
  /** Sites kept in memory, merged over the folder's (benchmarks and tests). */
  extraSites?: Record<string, Site>;
  /** Answer every name the certificate covers, unknown ones with 404, as a live host without the document would. @default false */
  anyHost?: boolean;
  /**
   * More names for the certificate that hosts other than the sites are shown, such as `*.load.test`
   * (a wildcard needs two labels after it); each site's own names it alone.
   */
  names?: string[];
  /**
   * Give each site an address of its own on loopback (127.0.2.1, 127.0.2.2, …), as publishers on
   * the Internet have, so that the resolver's limit per address applies to each alone; `connectTo`
   * then names each site's address. Off, every site shares the one address. @default true with the default host
   */
  spread?: boolean;
};

/**
 * A change to a running site (docs/decisions.md#the-sample-network): files replaced or added, routes
 * (such as a path answering 503), or the whole site down (its TLS handshake fails: `unreachable`).
 */
export type SiteChange = { files?: Record<string, string>; routes?: Record<string, Route>; down?: boolean };

/** The host that takes changes over HTTPS, for a network in another process (the demo's). */
export const CONTROL_HOST = "control.sample.test";

export type SampleNetwork = {
  port: number;
  /** Changes a site while the network runs; null puts it back as its folder has it. */
  change(domain: string, change: SiteChange | null): void;
  caPem: string;
  caFile: string;
  /** `IDENT_CONNECT_TO` value sending each site to its own address, and every other host to the first. */
  connectTo: string;
  /** `IDENT_CONNECT_TO` value sending every host to one address (short enough to type). */
  connectToOne: string;
  env: { IDENT_CONNECT_TO: string; NODE_EXTRA_CA_CERTS: string };
  domains: string[];
  /** Requests seen, by `host + path`. */
  requests: Map<string, number>;
  /** The last 1,000 requests: host, path and headers. */
  log: { host: string; path: string; headers: Record<string, string | string[] | undefined> }[];
  /** Highest number of requests to one host in flight at once, by host. */
  peakInFlight: Map<string, number>;
  /** Highest number of requests in flight at once, all hosts together. */
  peakTotal(): number;
  resetCounts(): void;
  close(): Promise<void>;
};

const here = path.dirname(fileURLToPath(import.meta.url));
export const SAMPLE_ROOT = path.resolve(here, "..", "..", "sample-network");

const TYPES: Record<string, string> = {
  ".json": "application/json",
  ".html": "text/html; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

function walk(dir: string, prefix = ""): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) Object.assign(files, walk(full, `${prefix}/${name}`));
    else if (!(prefix === "" && name === "site.json")) files[`${prefix}/${name}`] = readFileSync(full, "utf8");
  }
  return files;
}

/** Reads every publisher folder: its files by URL path, and its site.json. */
export function loadSites(root: string = SAMPLE_ROOT): Record<string, Site> {
  const sites: Record<string, Site> = {};
  for (const domain of readdirSync(root)) {
    const dir = path.join(root, domain);
    if (!statSync(dir).isDirectory()) continue;
    const sitePath = path.join(dir, "site.json");
    let site: Site = {};
    try {
      site = JSON.parse(readFileSync(sitePath, "utf8")) as Site;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw new Error(`${sitePath}: ${String(err)}`, { cause: err });
    }
    sites[domain.toLowerCase()] = { ...site, files: walk(dir) };
  }
  return sites;
}

/** The file for a URL path: exact, then `index.html` inside it, then `.html` beside it. */
function findFile(files: Record<string, string>, urlPath: string): { name: string; text: string } | null {
  const trimmed = urlPath.replace(/\/+$/, "");
  for (const name of [urlPath, `${trimmed}/index.html`, `${trimmed}.html`]) {
    const text = files[name];
    if (text !== undefined) return { name, text };
  }
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A 16 MiB window: a decoder must hold that much to inflate it. */
const BROTLI_BOMB = { params: { [zlibConstants.BROTLI_PARAM_LGWIN]: 24, [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } };

export async function startSampleNetwork(options: SampleNetworkOptions = {}): Promise<SampleNetwork> {
  const sites = { ...loadSites(options.root), ...options.extraSites };
  const domains = Object.keys(sites).sort();
  const tlds = [...new Set(domains.map((d) => d.split(".").pop()))];
  // The control host is named too: `*.test` covers one label, not `control.sample.test`.
  const ca = await createTestCa([...domains, ...tlds.map((t) => `*.${t}`), CONTROL_HOST, ...(options.names ?? [])]);
  // Each site shows a certificate naming it alone, as a publisher's does. One naming every site (over
  // a thousand names in the bench) cost every client about 1 ms more a handshake to read and check,
  // a cost no real publisher puts on it. A host a change adds later, the control host and any other
  // host (anyHost) get the one naming them all.
  const ownContexts = new Map<string, SecureContext>(
    await Promise.all(
      domains.map(async (d) => [d.toLowerCase(), createSecureContext({ key: ca.keyPem, cert: await ca.certFor([d]) })] as const),
    ),
  );
  const dir = scratchDir(`ident-sample-${process.pid}-`);
  const caFile = path.join(dir, "ca.pem");
  writeFileSync(caFile, ca.caPem);

  const delayMs = options.delayMs ?? 0;
  const requests = new Map<string, number>();
  const log: SampleNetwork["log"] = [];
  const inFlight = new Map<string, number>();
  const peakInFlight = new Map<string, number>();
  let total = 0;
  let peakTotal = 0;
  const sockets = new Set<import("node:stream").Duplex>();
  const compressed = new Map<string, Buffer>();

  const changes = new Map<string, SiteChange>();
  function change(domain: string, next: SiteChange | null): void {
    if (next === null) changes.delete(domain.toLowerCase());
    else changes.set(domain.toLowerCase(), next);
  }
  /** A site as it is now: its folder, with any change over it. */
  function siteOf(host: string): Site | undefined {
    const base = sites[host];
    const changed = changes.get(host);
    if (!changed) return base;
    if (changed.down) return undefined;
    return {
      ...base,
      files: { ...base?.files, ...changed.files },
      routes: { ...base?.routes, ...changed.routes },
    };
  }

  /** `POST https://control.sample.test/sites/{domain}` with a SiteChange, or `DELETE` to put it back. */
  async function control(req: IncomingMessage, res: ServerResponse, urlPath: string) {
    const domain = /^\/sites\/([a-z0-9.-]+)$/i.exec(urlPath)?.[1];
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      if (!domain || (req.method !== "POST" && req.method !== "DELETE")) throw new Error("POST or DELETE /sites/{domain}");
      change(domain, req.method === "DELETE" ? null : (JSON.parse(Buffer.concat(chunks).toString("utf8")) as SiteChange));
      res.writeHead(204).end();
    } catch (err) {
      res.writeHead(400, { "content-type": "text/plain" }).end(`${err instanceof Error ? err.message : String(err)}\n`);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "").toLowerCase();
    const urlPath = decodeURIComponent(new URL(req.url ?? "/", "https://x").pathname);
    const key = host + urlPath;
    requests.set(key, (requests.get(key) ?? 0) + 1);
    log.push({ host, path: urlPath, headers: req.headers });
    if (log.length > 1000) log.shift();
    const now = (inFlight.get(host) ?? 0) + 1;
    inFlight.set(host, now);
    peakInFlight.set(host, Math.max(peakInFlight.get(host) ?? 0, now));
    peakTotal = Math.max(peakTotal, ++total);
    res.on("close", () => {
      inFlight.set(host, (inFlight.get(host) ?? 1) - 1);
      total--;
    });

    if (host === CONTROL_HOST) return control(req, res, urlPath);
    const site = siteOf(host);
    if (!site && changes.get(host)?.down) {
      res.destroy();
      return;
    }
    const route: Route = site?.routes?.[urlPath] ?? {};
    const wait = delayMs + (route.delay_ms ?? 0);
    if (wait > 0) await sleep(wait);
    if (res.destroyed) return;

    const headers: Record<string, string> = { ...route.headers };
    if (route.redirect) {
      res.writeHead(route.status ?? 302, { ...headers, location: route.redirect });
      res.end();
      return;
    }
    const file = site?.files ? findFile(site.files, urlPath) : null;
    let body: Buffer | null = null;
    if (route.generate_bytes !== undefined) body = Buffer.from(`"${"x".repeat(Math.max(0, route.generate_bytes - 2))}"`);
    else if (route.body !== undefined) body = Buffer.from(route.body);
    else if (file) body = Buffer.from(file.text);
    const status = route.status ?? (body ? 200 : 404);
    if (!body) body = Buffer.from("not found\n");
    headers["content-type"] = route.content_type ?? (file ? (TYPES[path.extname(file.name)] ?? "text/html; charset=utf-8") : "text/plain");
    if (route.gzip || route.brotli) {
      // A generated body is compressed once per size: a load run asks for the same bomb many times.
      const key = route.generate_bytes !== undefined ? `${route.gzip ? "gzip" : "br"} ${route.generate_bytes}` : null;
      const raw = body;
      body = (key ? compressed.get(key) : undefined) ?? (route.gzip ? gzipSync(raw) : brotliCompressSync(raw, BROTLI_BOMB));
      if (key) compressed.set(key, body);
      headers["content-encoding"] = route.gzip ? "gzip" : "br";
    }
    if (!route.no_length) headers["content-length"] = String(body.byteLength);
    res.writeHead(status, headers);
    if (route.drip_ms) {
      for (const byte of body) {
        if (res.destroyed) return;
        res.write(Buffer.from([byte]));
        await sleep(route.drip_ms);
      }
      res.end();
      return;
    }
    res.end(body);
  }

  const makeServer = (): Server => {
    const server = createServer(
      {
        key: ca.keyPem,
        cert: ca.certPem,
        // A domain with no folder has no server: its TLS handshake fails (the outcome `unreachable`).
        SNICallback: (name, cb) => {
          const host = name.toLowerCase();
          if (!(siteOf(host) || host === CONTROL_HOST || options.anyHost)) cb(new Error(`no site ${name}`), undefined);
          else cb(null, ownContexts.get(host));
        },
      },
      (req, res) => {
        handle(req, res).catch((err: unknown) => {
          res.destroy(err instanceof Error ? err : new Error(String(err)));
        });
      },
    );
    server.on("connection", (s) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    });
    return server;
  };
  const listen = (server: Server, port: number, address: string) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, address, () => resolve());
    });
  const host = options.host ?? "127.0.0.1";
  const server = makeServer();
  await listen(server, options.port ?? 0, host);
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const connectToOne = `::${host.includes(":") ? `[${host}]` : host}:${port}`;
  // One more server per site, on an address of its own; unknown hosts go to the first one.
  const servers = [server];
  const entries: string[] = [];
  if (options.spread ?? host === "127.0.0.1") {
    for (const [i, domain] of domains.entries()) {
      const own = `127.0.${2 + Math.floor(i / 250)}.${1 + (i % 250)}`;
      const extra = makeServer();
      await listen(extra, port, own);
      servers.push(extra);
      entries.push(`${domain}:443:${own}:${port}`);
    }
  }
  const connectTo = [...entries, connectToOne].join(",");

  return {
    port,
    change,
    caPem: ca.caPem,
    caFile,
    connectTo,
    connectToOne,
    env: { IDENT_CONNECT_TO: connectTo, NODE_EXTRA_CA_CERTS: caFile },
    domains,
    requests,
    log,
    peakInFlight,
    peakTotal: () => peakTotal,
    resetCounts() {
      requests.clear();
      peakInFlight.clear();
      peakTotal = total;
      log.length = 0;
    },
    // Its CA file goes with it: nothing trusts it once the network is closed.
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        let open = servers.length;
        for (const each of servers) each.close(() => --open === 0 && resolve());
      }).finally(() => rmSync(dir, { recursive: true, force: true })),
  };
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = arg("--root");
  const net = await startSampleNetwork({
    port: Number(arg("--port") ?? 0),
    delayMs: Number(arg("--delay-ms") ?? 0),
    ...(root ? { root: path.resolve(root) } : {}),
  });
  const envText = `IDENT_CONNECT_TO=${net.env.IDENT_CONNECT_TO}\nNODE_EXTRA_CA_CERTS=${net.env.NODE_EXTRA_CA_CERTS}\nSAMPLE_CONNECT_TO_ONE=${net.connectToOne}\n`;
  const envFile = arg("--write-env");
  if (envFile) {
    mkdirSync(path.dirname(path.resolve(envFile)), { recursive: true });
    // Whole or not at all: a reader waiting for the file (test/network/spawn.ts) never reads half of it.
    writeFileSync(`${envFile}.partial`, envText);
    renameSync(`${envFile}.partial`, envFile);
  }
  process.stdout.write(`sample network: ${net.domains.length} domains on https://127.0.0.1:${net.port}\n${envText}`);
  const stop = () => void net.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  // Started by spawnSampleNetwork: stop when the parent goes away.
  if (process.send) process.on("disconnect", stop);
}
