/**
 * The ideal server-rendered entity page, the reference for the app's cold pages in Chromium
 * (bench/app.ts): a bare node:http server, no framework, no script in the page, no cache, no limits,
 * no compression. For `GET /entity/{domain}` it
 *   - sends the page's head (a few lines of inline CSS) at once;
 *   - fetches the entity document and, the moment it is in, writes the entity header (an `<h1>` with
 *     its name);
 *   - asks for all its claim documents at once and writes each claim's line, checked both ways (the
 *     document names the entity back), as its document arrives;
 *   - closes the HTML after the last one.
 * It marks them as the app does (`data-testid` "entity-header" and "claim"), so the bench times both
 * pages by the same markers. It reaches the publishers as the app does: where `IDENT_CONNECT_TO`
 * sends each name (docs/decisions.md#connect-to), trusting `NODE_EXTRA_CA_CERTS`, over node:https with
 * a new TLS connection per document, as a plain program would (the bare client's path,
 * bench/bare-client.ts).
 *
 * Why it is the floor: a server-rendered page cannot show a header before its entity document is in,
 * nor a claim before its document is, and cannot fetch them with more parallelism than this. What is
 * left is the network, TLS, HTML and the browser: the same in the app's page, so the app's page ÷
 * this one's, in the same browser, is what the app adds (docs/decisions.md#cold-pages).
 *
 * Given the app's own shell (BENCH_SHELL, a file: the bytes the app sends for a cold entity page
 * before its entity document is in, bench/app.ts `captureShell`), it sends that instead of its few
 * lines of head, and answers every other path (the shell's stylesheets, fonts, icons) from the app at
 * BENCH_ASSETS: the page's design then costs both pages the same, and the app's page ÷ this one is
 * what the app's server adds.
 *
 * Run by bench/app.ts as the app is: `node --import tsx bench/ideal-page.ts` with PORT,
 * IDENT_CONNECT_TO and NODE_EXTRA_CA_CERTS in the environment; `/` answers 200 once it listens.
 */
import { readFileSync } from "node:fs";
import { createServer, get as httpGet, type IncomingMessage, type ServerResponse } from "node:http";
import { request } from "node:https";
import { matchConnectTo, parseConnectTo } from "ident-resolver/node";
import { isDomain, parseCredentialId, parsePropertyId, SECTION, sameId } from "ident-resolver";
import { credentialLocation, entityLocation, propertyLocation } from "ident-resolver";

const parsed = parseConnectTo(process.env.IDENT_CONNECT_TO ?? "");
if (!parsed.ok) throw new Error(parsed.message);
const connectTo = parsed.entries;

/** The body of one GET on a new connection, dialled where `IDENT_CONNECT_TO` sends its host. */
function get(url: string): Promise<string> {
  const u = new URL(url);
  const to = matchConnectTo(connectTo, u.hostname, 443);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: to?.host ?? u.hostname,
        port: to?.port ?? 443,
        path: u.pathname,
        servername: u.hostname,
        headers: { host: u.hostname },
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`HTTP ${res.statusCode}`));
          return;
        }
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve(body));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

const record = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {});
const text = (v: unknown): string => (typeof v === "string" ? v : "");
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A claim of the entity: its id, where its document is, and whether that document names `networkId` back. */
type Claim = { id: string; url: string; verifies: (doc: Record<string, unknown>) => boolean };

function claimsOf(entity: Record<string, unknown>, networkId: string): Claim[] {
  const claims: Claim[] = [];
  for (const p of list(entity.properties)) {
    const id = text(record(p).id);
    const domain = parsePropertyId(id);
    if (domain)
      claims.push({
        id,
        url: propertyLocation(domain).json,
        verifies: (doc) => {
          const property = record(doc.ident_property);
          return sameId(text(property.id), id) && list(property.ownership).some((o) => sameId(text(record(o).network_id), networkId));
        },
      });
  }
  for (const c of list(entity.credentials)) {
    const id = text(record(c).id);
    const credential = parseCredentialId(id);
    if (credential)
      claims.push({ id, url: credentialLocation(credential).json, verifies: (doc) => sameId(text(doc.ident_entity_id), networkId) });
  }
  return claims;
}

const HEAD = (domain: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${escape(domain)}</title><style>body{font:16px/1.5 sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}` +
  `ul{list-style:none;padding:0}li{padding:.25rem 0;border-bottom:1px solid #ddd}code{color:#555}</style></head><body><main>`;

/** The app's shell, when given: sent in place of the head. */
const SHELL = process.env.BENCH_SHELL ? readFileSync(process.env.BENCH_SHELL, "utf8") : null;

/** Any other path, from the app whose shell this page sends (its stylesheets, fonts, icons), as the app sends it. */
function fromApp(req: IncomingMessage, res: ServerResponse, origin: string) {
  httpGet(new URL(req.url ?? "/", origin), { headers: { "accept-encoding": req.headers["accept-encoding"] ?? "" } }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  }).on("error", () => res.destroy());
}

async function entityPage(domain: string, res: ServerResponse) {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.write(SHELL ?? HEAD(domain));
  const networkId = `${SECTION}:entity:${domain}`;
  let entity: Record<string, unknown>;
  try {
    entity = record(JSON.parse(await get(entityLocation(domain).json)));
    if (!sameId(text(entity.network_id), networkId)) throw new Error(`network_id is not ${networkId}`);
  } catch (e) {
    res.end(
      `<header data-testid="entity-header"><h1>${escape(domain)}</h1><p>Not verified: ${escape(String(e))}</p></header></main></body></html>`,
    );
    return;
  }
  const name = text(record(entity.details).name) || domain;
  res.write(`<header data-testid="entity-header"><h1>${escape(name)}</h1><p>${escape(domain)}</p></header><ul>`);
  await Promise.all(
    claimsOf(entity, networkId).map(async (claim) => {
      let verified = false;
      let why = "";
      try {
        verified = claim.verifies(record(JSON.parse(await get(claim.url))));
        if (!verified) why = ": the document does not name this entity";
      } catch (e) {
        why = `: ${String(e)}`;
      }
      res.write(
        `<li data-testid="claim" data-verified="${verified}">${verified ? "✓" : "✗"} <code>${escape(claim.id)}</code>${escape(why)}</li>`,
      );
    }),
  );
  res.end("</ul></main></body></html>");
}

const server = createServer((req, res) => {
  const m = /^\/entity\/([^/?%]+)$/.exec(req.url ?? "");
  const domain = (m?.[1] ?? "").toLowerCase();
  if (req.method === "GET" && isDomain(domain)) {
    entityPage(domain, res).catch((e: unknown) => res.destroy(e instanceof Error ? e : new Error(String(e))));
    return;
  }
  if (process.env.BENCH_ASSETS && req.url !== "/") return fromApp(req, res, process.env.BENCH_ASSETS);
  res
    .writeHead(req.url === "/" ? 200 : 404, { "content-type": "text/plain; charset=utf-8" })
    .end(req.url === "/" ? "ideal page\n" : "not found\n");
});
// Bound as the app's server is (web/serve.js).
server.listen(Number(process.env.PORT ?? 3220), process.env.HOSTNAME ?? "0.0.0.0");
