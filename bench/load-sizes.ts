/**
 * `npm run load -- sizes`: what the longest strings a publisher can send make of the public answers
 * (docs/decisions.md#validation: every publisher string has a length it is kept at). Against a fresh
 * `npm start` on loopback, with a sample network of its own: 50 entities, each a document of about
 * 1 MiB (half of them a 1 MB `entity_type`, the other half long URLs: 110 claims with ids of up to
 * 1,024 bytes, then connection URLs too long to read), names, titles and descriptions of letters
 * that are 4 bytes each in UTF-8, domains of 200 characters; one of them with every claim verified by
 * counterparts as long. It looks each up, then prints the bytes of the largest `/api/changes?limit=200`
 * page, `/api/search` page, entity page and feed (goal ≤ 1 MB each) and the app's RSS before and at
 * its peak (goal ≤ +64 MB), with the publisher fetches the pages' checks made meanwhile. Needs `npm run build`.
 */
import { request } from "node:http";
import path from "node:path";
import type { Site } from "../test/network/server";
import { startSampleNetwork } from "../test/network/server";
import { type App, metric, root, rssMb, scrape, sleep, startApp, stopApp } from "./load-kit";

const S = "\u00a7";
/** A letter 4 bytes long in UTF-8 (MATHEMATICAL DOUBLE-STRUCK CAPITAL X): the most bytes a kept character can take. */
const WIDE = "\u{1d54f}";
const wide = (n: number) => WIDE.repeat(n);
const ENTITIES = 50;
const JSON_CAP = 1024 * 1024;
const PORT = 3430;

/** A domain of 200 characters under `sizes.test`, unique to `tag`. */
const longDomain = (tag: string) => `${tag}-${"a".repeat(60 - tag.length)}.${"b".repeat(63)}.${"c".repeat(63)}.sizes.test`;
export const sizesDomain = (i: number) => longDomain(`e${i}`);
/** An https URL of exactly `bytes` bytes. */
const urlOf = (host: string, bytes: number) => `https://${host}/${"u".repeat(bytes - host.length - 9)}`;

/** The 50 credentials and 50 properties of entity `i`, with ids as long as are read (1,024 bytes). */
function claimsOf(i: number) {
  const properties = Array.from({ length: 50 }, (_, k) => ({
    id: `${S}:property:${longDomain(`p${i}x${k}`)}`,
    name: `Site ${k} ${wide(520)}`,
    type: wide(320),
    description: wide(400),
    url: urlOf(`p${k}.sizes.test`, 1024),
  }));
  const credentials = Array.from({ length: 50 }, (_, k) => {
    const issuer = longDomain(`c${i}x${k}`);
    const user = `u${k}`;
    const tail = `@${user}@${issuer}/`;
    return {
      id: `${tail}${"p".repeat(1024 - tail.length)}`,
      title: `Member ${k} ${wide(520)}`,
      type: wide(320),
      property: { id: `${S}:property:${issuer}`, name: wide(520) },
    };
  });
  return { properties, credentials };
}

/** Entity `i`'s document, as near 1 MiB as it goes: a 1 MB entity_type (even), or long URLs (odd). */
function entityDocument(i: number): string {
  const domain = sizesDomain(i);
  const details = {
    name: `Sizes ${i} ${wide(400)}`,
    description: wide(6000),
    email: wide(400),
    location: wide(400),
    legal_name: wide(400),
    established: wide(400),
    registered_in: wide(400),
    legal_entity_type: wide(400),
  };
  const base = { network_id: `${S}:entity:${domain}`, details };
  if (i % 2 === 0) {
    const room = JSON_CAP - Buffer.byteLength(JSON.stringify(base)) - 64;
    return JSON.stringify(Object.assign({ entity_type: "t".repeat(Math.min(1_000_000, room)) }, base));
  }
  const connections = Array.from({ length: 10 }, (_, k) => ({ id: urlOf(`n${k}.sizes.test`, 1024) }));
  const doc = Object.assign({ entity_type: wide(400) }, base, claimsOf(i), { other_connections: connections });
  const room = JSON_CAP - Buffer.byteLength(JSON.stringify(doc)) - 64;
  // The rest of the mebibyte in connection URLs too long to read.
  for (let left = room; left > 1100; left -= Math.min(220_000, left) + 10)
    connections.push({ id: urlOf("long.sizes.test", Math.min(220_000, left)) });
  return JSON.stringify(doc);
}

/** Counterparts of entity 1's claims, every one naming it, each text as long as a document holds. */
function counterparts(sites: Record<string, Site>): void {
  const networkId = `${S}:entity:${sizesDomain(1)}`;
  const { properties, credentials } = claimsOf(1);
  for (const p of properties) {
    const host = p.id.slice(`${S}:property:`.length);
    sites[host] = {
      files: {
        "/ident-property.json": JSON.stringify({
          ident_property: {
            id: p.id,
            name: wide(6000),
            type: wide(6000),
            description: wide(60_000),
            url: p.url,
            ownership: [{ network_id: networkId }],
          },
        }),
      },
    };
  }
  for (const c of credentials) {
    const [, user = "", rest = ""] = /^@([^@]+)@(.+)$/.exec(c.id) ?? [];
    const slash = rest.indexOf("/");
    const host = rest.slice(0, slash);
    const file = `/${rest.slice(slash + 1)}/${user}/ident-credential.json`;
    const credential = { id: c.id, title: wide(6000), type: wide(6000), description: wide(60_000), dataset: { name: wide(6000) } };
    sites[host] = { files: { [file]: JSON.stringify({ ident_entity_id: networkId, ident_credential: credential }) } };
  }
}

/** The publishers of this run. */
export function sizesSites(): Record<string, Site> {
  const sites: Record<string, Site> = {};
  for (let i = 0; i < ENTITIES; i++) sites[sizesDomain(i)] = { files: { "/ident.json": entityDocument(i) } };
  counterparts(sites);
  return sites;
}

/** GET `target` without compression: its status and the bytes of its body. */
function bytesOf(
  port: number,
  target: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; bytes: number; body: string }> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: target, headers, agent: false, timeout: 120_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, bytes: body.length, body: body.toString("utf8") });
      });
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolve({ status: 0, bytes: 0, body: "" }));
    req.end();
  });
}

/** A client address of its own for each request (after IDENT_TRUSTED_HOPS=1): the per-client limits are not what this run measures. */
let clients = 0;
const fresh = () => ({ "x-forwarded-for": `10.77.${(++clients >> 8) & 255}.${clients & 255}` });

/** The largest of `targets`' answers, with the statuses seen. */
async function largest(port: number, targets: string[]): Promise<{ bytes: number; statuses: Set<number> }> {
  let bytes = 0;
  const statuses = new Set<number>();
  for (const t of targets) {
    const got = await bytesOf(port, t, fresh());
    statuses.add(got.status);
    bytes = Math.max(bytes, got.bytes);
  }
  return { bytes, statuses };
}

/** Every page of `/api/changes?limit=200`, following `next_cursor`: the largest. */
async function changesPages(port: number): Promise<{ bytes: number; pages: number; statuses: Set<number> }> {
  let bytes = 0;
  let pages = 0;
  const statuses = new Set<number>();
  for (let after: string | null = ""; after !== null && pages < 100; pages++) {
    const got = await bytesOf(port, `/api/changes?limit=200${after ? `&after=${encodeURIComponent(after)}` : ""}`, fresh());
    statuses.add(got.status);
    bytes = Math.max(bytes, got.bytes);
    after = got.status === 200 ? ((JSON.parse(got.body) as { next_cursor: string | null }).next_cursor ?? null) : null;
  }
  return { bytes, pages, statuses };
}

/** Publisher fetches made so far, whatever their outcome (the app's /metrics). */
const fetches = (text: string) => [...text.matchAll(/^ident_fetches_total\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);

const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
const said = (s: Set<number>) => [...s].sort().join("/");

/** The app's RSS sampled every 200 ms until stopped: the most it reached. */
function peakRss(pid: number): () => number {
  let peak = rssMb(pid) || 0;
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid) || 0)), 200);
  return () => (clearInterval(timer), Math.max(peak, rssMb(pid) || 0));
}

/** The public answers of the index read one by one, then 8 readers of `/api/changes?limit=200` at once. */
async function readAll(port: number) {
  const domains = Array.from({ length: ENTITIES }, (_, i) => sizesDomain(i));
  const changes = await changesPages(port);
  const search = await largest(
    port,
    ["", "&cursor=bzIw", "&cursor=bzQw"].map((c) => `/api/search?q=sizes${c}`),
  );
  const pages = await largest(
    port,
    domains.map((d) => `/entity/${d}`),
  );
  const feeds = await largest(port, [
    ...domains.map((d) => `/entity/${d}/feed.xml`),
    "/changes.xml",
    `/issuer/${longDomain("c1x0")}/feed.xml`,
  ]);
  const t0 = performance.now();
  const readers = await Promise.all(Array.from({ length: 8 }, () => bytesOf(port, "/api/changes?limit=200", fresh())));
  const together = { ms: performance.now() - t0, statuses: new Set(readers.map((r) => r.status)) };
  return { changes, search, pages, feeds, together };
}

/**
 * The run: its own sample network and app (port 3430), the 50 lookups, then the largest answer of
 * each kind and the app's memory, on one line.
 */
export async function sizesRun(): Promise<void> {
  const net = await startSampleNetwork({
    root: path.join(root, "sample-network"),
    extraSites: sizesSites(),
    anyHost: true,
    names: ["*.sizes.test"],
    spread: false,
  });
  const env = {
    NODE_EXTRA_CA_CERTS: net.caFile,
    NEXT_TELEMETRY_DISABLED: "1",
    IDENT_CONNECT_TO: net.connectTo,
    IDENT_TRUSTED_HOPS: "1",
    // Every publisher here is one address.
    IDENT_ADDRESS_BUDGET_PER_MIN: "1000000",
  };
  let app: App | undefined;
  try {
    app = await startApp(PORT, env);
    const { pid, port } = app;
    const rest = rssMb(pid);
    const lookups = peakRss(pid);
    const resolved = await largest(
      port,
      Array.from({ length: ENTITIES }, (_, i) => `/api/resolve?q=${sizesDomain(i)}`),
    );
    for (let i = 0; i < 300 && metric(await scrape(port), "ident_records_waiting") !== 0; i++) await sleep(200);
    const lookupPeak = lookups();
    const held = rssMb(pid);
    const fetchedBefore = fetches(await scrape(port));
    const reads = peakRss(pid);
    const r = await readAll(port);
    const readPeak = reads();
    // The pages check their entity again: what the document cache no longer holds is fetched.
    const refetched = fetches(await scrape(port)) - fetchedBefore;
    const most = Math.max(r.changes.bytes, r.search.bytes, r.pages.bytes, r.feeds.bytes);
    console.log(
      `sizes     ${ENTITIES} entities with the longest strings a publisher can send (1 MiB documents, 1 MB entity types, ` +
        `4-byte letters, 200-character domains): the largest /api/changes?limit=200 ${kb(r.changes.bytes)} (of ${r.changes.pages} pages), ` +
        `/api/search ${kb(r.search.bytes)}, entity page ${kb(r.pages.bytes)}, feed ${kb(r.feeds.bytes)} ` +
        `(goal ≤ 1 MB each: ${most <= 1024 * 1024 ? "met" : "missed"}); /api/resolve ${kb(resolved.bytes)}; 8 readers of ` +
        `/api/changes?limit=200 at once ${(r.together.ms / 1000).toFixed(1)} s, ${said(r.together.statuses)}; answered ` +
        `${[resolved, r.changes, r.search, r.pages, r.feeds].map((x) => said(x.statuses)).join(", ")}; app RSS ${rest.toFixed(0)} MB ` +
        `at rest, ${lookupPeak.toFixed(0)} MB at most during the lookups, ${held.toFixed(0)} MB after; reading the answers ` +
        `${readPeak.toFixed(0)} MB at most (+${(readPeak - held).toFixed(0)} MB; goal ≤ +64 MB), with ${refetched} publisher fetches ` +
        `the pages' checks made of what the document cache no longer held`,
    );
  } finally {
    if (app) await stopApp(app);
    await net.close();
  }
}
