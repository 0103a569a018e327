/**
 * An entity's badge (docs/api.md#badges): each state drawn and read back by a real XML parser
 * (@xmldom/xmldom, stopping at any warning), and the route as the server answers it (the front door,
 * then web/badge.ts) over HTTP on loopback, from an in-memory index: ETag and 304, CORS, its type and
 * cache life, HEAD, an unknown domain, a path that is no domain, and nothing ever fetched.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DOMParser, onWarningStopParsing, type Document } from "@xmldom/xmldom";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Claim, EntityResult } from "ident-resolver";
import { openStore, type Store } from "ident-resolver/store";
import type { Standing } from "ident-resolver/store";
import { createBadges, type BadgeDeps, type Badges } from "./badge";
import { badgeFacts, drawBadge } from "./badge-drawing";
import { frontDoor } from "./front";
import { classify } from "./routes";

const SVG_NS = "http://www.w3.org/2000/svg";
const quiet = { warn: () => undefined, error: () => undefined };

/** The SVG parsed as XML; any warning or error stops the parser and fails the test. */
function parsed(svg: string): Document {
  return new DOMParser({ onError: onWarningStopParsing }).parseFromString(svg, "image/svg+xml");
}

/** What a reader of the parsed badge finds: its name, its role, and the texts drawn (each once). */
function readBadge(svg: string) {
  const doc = parsed(svg);
  const root = doc.documentElement;
  if (!root) throw new Error("no root element");
  const titles = Array.from(doc.getElementsByTagNameNS(SVG_NS, "title"));
  // The texts a person sees: badge-maker draws each twice more as a shadow, hidden from screen readers.
  const shown = Array.from(doc.getElementsByTagNameNS(SVG_NS, "text"))
    .filter(
      (t) =>
        t.parentNode?.nodeType === 1 &&
        (t.parentNode as unknown as { getAttribute(n: string): string | null }).getAttribute("aria-hidden") !== "true",
    )
    .map((t) => t.textContent);
  return {
    element: `${root.namespaceURI} ${root.localName}`,
    role: root.getAttribute("role"),
    label: root.getAttribute("aria-label"),
    title: titles.map((t) => t.textContent),
    titleFirst: root.firstChild?.nodeName,
    shown,
    width: Number(root.getAttribute("width")),
    fills: Array.from(doc.getElementsByTagNameNS(SVG_NS, "rect")).map((r) => r.getAttribute("fill")),
  };
}

const STANDINGS: [string, Standing | null, string, string, string][] = [
  // state, standing, message, shields' colour (badge-maker 6's lightgrey, red, blue, yellow, orange, brightgreen), accessible name
  ["unknown", null, "unknown", "#939393", "ident: a.example is not in this resolver's index"],
  [
    "not verified",
    { status: "not_found", verified: 3, unverified: 0 },
    "not verified",
    "#dd4343",
    "ident: a.example is not verified (its document is not accepted)",
  ],
  [
    "no claims",
    { status: "accepted", verified: 0, unverified: 0 },
    "no claims",
    "#007ec6",
    "ident: a.example is accepted and lists no claims",
  ],
  [
    "some verified, half or more",
    { status: "accepted", verified: 3, unverified: 2 },
    "3 of 5 verified",
    "#d8b800",
    "ident: a.example has 3 of 5 claims verified",
  ],
  [
    "some verified, fewer than half",
    { status: "accepted", verified: 1, unverified: 4 },
    "1 of 5 verified",
    "#ea7233",
    "ident: a.example has 1 of 5 claims verified",
  ],
  [
    "none of them verified",
    { status: "accepted", verified: 0, unverified: 2 },
    "0 of 2 verified",
    "#ea7233",
    "ident: a.example has 0 of 2 claims verified",
  ],
  [
    "all verified",
    { status: "accepted", verified: 5, unverified: 0 },
    "5 of 5 verified",
    "#4b0",
    "ident: a.example has 5 of 5 claims verified",
  ],
  [
    "one claim, verified",
    { status: "accepted", verified: 1, unverified: 0 },
    "1 of 1 verified",
    "#4b0",
    "ident: a.example has 1 of 1 claim verified",
  ],
];

describe("the badge's drawing", () => {
  it.each(STANDINGS)("%s: a valid SVG with role=img, a <title> naming the domain, and its text", (_, standing, message, color, name) => {
    const badge = readBadge(drawBadge(badgeFacts("a.example", standing)));
    expect(badge.element).toBe(`${SVG_NS} svg`);
    expect(badge.role).toBe("img");
    expect(badge.title).toEqual([name]);
    expect(badge.label).toBe(name);
    expect(badge.titleFirst).toBe("title");
    expect(badge.shown).toEqual(["ident", message]);
    expect(badge.fills).toContain(color);
    expect(badge.width).toBeGreaterThan(40);
  });

  it("is as wide as its text, measured: a longer message makes a wider badge", () => {
    const width = (verified: number, unverified: number) =>
      readBadge(drawBadge(badgeFacts("a.example", { status: "accepted", verified, unverified }))).width;
    expect(width(10, 10)).toBeGreaterThan(width(1, 1));
    expect(width(1, 1)).toBeGreaterThan(readBadge(drawBadge(badgeFacts("a.example", null))).width);
  });

  it("is held in an allocation of its own, as the memory cap counts it", async () => {
    const drawn = await createBadges({
      store: Promise.resolve({ db: { query: async () => [] } } as unknown as Store),
      log: quiet,
    }).current("a.example");
    expect(drawn?.bytes.buffer.byteLength).toBe(drawn?.bytes.length);
  });

  it("escapes what it names: the title of a name XML gives meaning to is still a document, saying it as it is", () => {
    const hostile = `a<b>&"c'</title><script>x</script>.example`;
    const svg = drawBadge(badgeFacts(hostile, null));
    expect(svg).not.toContain("<script>");
    const badge = readBadge(svg);
    expect(badge.title).toEqual([`ident: ${hostile} is not in this resolver's index`]);
    expect(badge.label).toBe(`ident: ${hostile} is not in this resolver's index`);
  });
});

/** An accepted entity whose claims verify as `verdicts` says (half properties, half credentials); or one not accepted. */
function result(domain: string, verdicts: boolean[], status: EntityResult["entity"]["status"] = "accepted"): EntityResult {
  const claim = (verified: boolean, i: number): Claim => ({
    id: `§:property:site${i}.example`,
    verified,
    ...(verified ? {} : { reason: "not_listed" as const }),
    claimed: { id: `§:property:site${i}.example` },
    problems: [],
  });
  const claims = verdicts.map(claim);
  return {
    entity: {
      status,
      domain,
      problems: [],
      ...(status === "accepted" ? { network_id: `§:entity:${domain}`, details: { name: domain } } : {}),
    },
    properties: claims,
    credentials: [],
    connections: [],
    jsonld: null,
    cache: { fetched_at: new Date().toISOString(), stale: false },
  };
}

type Got = { status: number; headers: IncomingHttpHeaders; body: string };

/** A server that answers as web/server.ts does for a badge: the front door, then web/badge.ts. */
async function serveBadges(
  badges: Badges,
): Promise<{ server: Server; get(path: string, init?: { method?: string; headers?: Record<string, string> }): Promise<Got> }> {
  const server = createServer((req, res) => {
    const route = classify(req.method ?? "GET", req.url ?? "/");
    if (frontDoor(req, res, route)) return;
    if (route.target.kind !== "badge") {
      res.statusCode = 418;
      res.end();
      return;
    }
    badges.serve(req, res, route);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const get = (path: string, init: { method?: string; headers?: Record<string, string> } = {}) =>
    new Promise<Got>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port, path, method: init.method ?? "GET", headers: init.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      });
      req.on("error", reject);
      req.end();
    });
  return { server, get };
}

describe("GET /entity/{domain}/badge.svg, from an in-memory index", () => {
  let store: Store;
  let badges: Badges;
  let server: Server;
  let get: Awaited<ReturnType<typeof serveBadges>>["get"];
  const fetched = vi.fn(() => Promise.reject(new Error("a badge must never fetch")));

  beforeAll(async () => {
    store = await openStore({ kind: "embedded", dataDir: null }, () => undefined);
    await store.record(result("all.example", [true, true, true, true, true]));
    await store.record(result("some.example", [true, true, true, false, false]));
    await store.record(result("none.example", []));
    await store.record(result("broken.example", [], "rejected"));
    badges = createBadges({ store: Promise.resolve(store), log: quiet });
    ({ server, get } = await serveBadges(badges));
    vi.stubGlobal("fetch", fetched);
  }, 60_000);
  afterAll(async () => {
    vi.unstubAllGlobals();
    await new Promise((r) => server?.close(r));
    await store?.close();
  });

  it.each([
    ["all.example", "5 of 5 verified"],
    ["some.example", "3 of 5 verified"],
    ["none.example", "no claims"],
    ["broken.example", "not verified"],
    ["never-seen.example", "unknown"],
    ["ALL.Example", "5 of 5 verified"],
  ])("%s: 200, an SVG that says %s", async (domain, message) => {
    const got = await get(`/entity/${domain}/badge.svg`);
    expect(got.status).toBe(200);
    expect(got.headers["content-type"]).toBe("image/svg+xml; charset=utf-8");
    expect(readBadge(got.body).shown).toEqual(["ident", message]);
    expect(readBadge(got.body).title[0]).toContain(domain.toLowerCase());
  });

  it("carries CORS, a cache life of minutes (one for the unknown badge), the security headers and a strict policy", async () => {
    const known = await get("/entity/all.example/badge.svg");
    expect(known.headers["access-control-allow-origin"]).toBe("*");
    expect(known.headers["cache-control"]).toBe("public, max-age=300");
    expect(known.headers["x-content-type-options"]).toBe("nosniff");
    expect(known.headers["x-frame-options"]).toBe("DENY");
    expect(known.headers["content-security-policy"]).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(Number(known.headers["content-length"])).toBe(Buffer.byteLength(known.body));
    expect((await get("/entity/never-seen.example/badge.svg")).headers["cache-control"]).toBe("public, max-age=60");
  });

  it("has an ETag from its bytes; If-None-Match with it (a proxy's W/ too) answers 304 with no body", async () => {
    const first = await get("/entity/some.example/badge.svg");
    const etag = first.headers.etag;
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    expect((await get("/entity/some.example/badge.svg")).headers.etag).toBe(etag);
    expect((await get("/entity/all.example/badge.svg")).headers.etag).not.toBe(etag);
    for (const tag of [etag!, `W/${etag}`, `"other", ${etag}`]) {
      const again = await get("/entity/some.example/badge.svg", { headers: { "if-none-match": tag } });
      expect(again.status).toBe(304);
      expect(again.body).toBe("");
      expect(again.headers.etag).toBe(etag);
      expect(again.headers["access-control-allow-origin"]).toBe("*");
    }
    expect((await get("/entity/some.example/badge.svg", { headers: { "if-none-match": '"other"' } })).status).toBe(200);
  });

  it("HEAD: the headers of GET, no body", async () => {
    const full = await get("/entity/all.example/badge.svg");
    const head = await get("/entity/all.example/badge.svg", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.body).toBe("");
    expect(head.headers["content-length"]).toBe(full.headers["content-length"]);
    expect(head.headers.etag).toBe(full.headers.etag);
  });

  it("a path that names no domain is 404 (no entity's badge); a malformed one 400; another method 405: never a 500", async () => {
    for (const path of [
      "/entity/not%20a%20domain/badge.svg",
      "/entity//badge.svg",
      "/entity/127.0.0.1/badge.svg",
      "/entity/a..example/badge.svg",
    ]) {
      const got = await get(path);
      expect(got.status, path).toBe(404);
      expect(got.headers["content-type"], path).toMatch(/^text\/plain/);
    }
    expect((await get("/entity/%E0%A4%A/badge.svg")).status).toBe(400);
    const post = await get("/entity/all.example/badge.svg", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe("GET, HEAD");
  });

  it("never fetches", () => expect(fetched).not.toHaveBeenCalled());

  it("is answered from memory for a minute; the entity page's read (`current`) reads the index and renews it", async () => {
    expect(readBadge((await get("/entity/some.example/badge.svg")).body).shown[1]).toBe("3 of 5 verified");
    await store.record(result("some.example", [true, true, true, true, false]));
    expect(readBadge((await get("/entity/some.example/badge.svg")).body).shown[1]).toBe("3 of 5 verified");
    expect((await badges.current("some.example"))?.facts.message).toBe("4 of 5 verified");
    expect(readBadge((await get("/entity/some.example/badge.svg")).body).shown[1]).toBe("4 of 5 verified");
  });
});

describe("the badge's reads of the index", () => {
  /** A store whose one query takes a moment (or fails), counting the reads. */
  function slowStore(fail = false) {
    const state = { reads: 0 };
    const db = {
      query: async () => {
        state.reads++;
        await new Promise((r) => setTimeout(r, 20));
        if (fail) throw new Error("connection lost");
        return [{ status: "accepted", verified: 2, unverified: 0 }];
      },
    };
    return { state, store: Promise.resolve({ db } as unknown as Store) as BadgeDeps["store"] };
  }

  it("one read for requests at once, none for those in the next minute", async () => {
    const { state, store } = slowStore();
    const { server, get } = await serveBadges(createBadges({ store, log: quiet }));
    try {
      const all = await Promise.all(Array.from({ length: 5 }, () => get("/entity/a.example/badge.svg")));
      expect(all.map((g) => g.status)).toEqual([200, 200, 200, 200, 200]);
      expect(state.reads).toBe(1);
      await get("/entity/a.example/badge.svg");
      expect(state.reads).toBe(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("no index, or one that cannot be read: 503 with Retry-After, nothing kept", async () => {
    const failing = slowStore(true);
    for (const [store, retry] of [
      [Promise.resolve(null), "60"],
      [failing.store, "5"],
    ] as const) {
      const { server, get } = await serveBadges(createBadges({ store, log: quiet }));
      try {
        for (let i = 0; i < 2; i++) {
          const got = await get("/entity/a.example/badge.svg");
          expect(got.status).toBe(503);
          expect(got.headers["retry-after"]).toBe(retry);
          expect(got.headers["cache-control"]).toBe("no-store");
          // A grey badge, where an <img> shows it, named for what went wrong.
          expect(got.headers["content-type"]).toMatch(/^image\/svg\+xml/);
          expect(got.headers["access-control-allow-origin"]).toBe("*");
          expect(readBadge(got.body).label).toBe("ident: index unavailable");
        }
      } finally {
        await new Promise((r) => server.close(r));
      }
    }
    expect(failing.state.reads).toBe(2);
  });
});
