/** The limits on requests in progress, tested from their declarations (docs/architecture.md#traffic). */
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { answerRefusal, OVER_LIMIT_DELAY_MS } from "ident-resolver/traffic";
import { createWindows } from "ident-resolver/traffic";
import { LIMITS, trafficSettings } from "ident-resolver/traffic";
import { classify } from "./routes";
import { createShedder, type ShedDeps } from "./shed";

const defaults = trafficSettings();
/** No per-client limit of a route's is spent (the limits in progress are what these tests count). */
const noLimit = async () => ({ ok: true as const });

/** A shedder at the default limits, each request's client given as the server decided it, with `deps` over them. */
const shedderWith = (deps: Partial<ShedDeps> = {}) =>
  createShedder(Object.assign({ settings: defaults, retryAfterS: () => 10, refused: () => undefined, take: noLimit }, deps));

/** A request and its response, as far as the shedder reads and writes them. */
function exchange(url: string, client: string) {
  const res = Object.assign(new EventEmitter(), {
    destroyed: false,
    status: 0,
    headers: {} as Record<string, string>,
    body: "",
    hasHeader(name: string) {
      return Object.keys(this.headers).some((n) => n.toLowerCase() === name.toLowerCase());
    },
    setHeader(name: string, value: string) {
      this.headers[name] = value;
    },
    writeHead(status: number) {
      this.status = status;
    },
    end(body: string) {
      this.body = body;
    },
  });
  const req = { url, method: "GET", headers: {} };
  return { req: req as unknown as IncomingMessage, res: res as unknown as ServerResponse & typeof res, client };
}

describe.each(["lookupsInProgress", "lookupsInInstance", "requestsInInstance"] as const)("in progress: %s", (name) => {
  it(`refuses past ${LIMITS[name].default} in progress, with ${LIMITS[name].refused}, and counts again when one ends`, () => {
    const refusals: string[] = [];
    const shedder = shedderWith({ refused: (r) => refusals.push(r.refused) });
    const limit = defaults[name];
    const path = name === "requestsInInstance" ? "/" : "/entity/alice.example";
    const client = (i: number) => (name === "lookupsInProgress" ? "one" : `c${i}`);
    const open = Array.from({ length: limit }, (_, i) => exchange(path, client(i)));
    for (const ask of open) expect(shedder.shed(ask.req, ask.res, classify("GET", path), ask.client)).toBeNull();
    const over = exchange(path, client(limit));
    const shed = shedder.shed(over.req, over.res, classify("GET", path), over.client);
    expect(shed).not.toBeNull();
    shed?.write();
    expect(over.res.status).toBe(answerRefusal({ refused: LIMITS[name].refused, retryAfterS: 1, message: "x" }).status);
    expect(over.res.headers["Retry-After"]).toMatch(/^\d+$/);
    expect(refusals).toEqual([LIMITS[name].refused]);
    open[0]?.res.emit("close");
    expect(shedder.shed(over.req, over.res, classify("GET", path), over.client)).toBeNull();
    for (const { res } of open) res.emit("close");
    over.res.emit("close");
    expect(shedder.inProgress.size).toBe(0);
  });
});

describe("lookupsInInstance is fair (docs/architecture.md#fair-queues)", () => {
  it("a client with lookups in progress is refused a quarter before the bound; a client with none is taken until it", () => {
    const shedder = shedderWith();
    const path = "/entity/alice.example";
    const bound = defaults.lookupsInInstance;
    const early = bound - Math.floor(bound / 4);
    // A crowd of clients with 4 lookups each, up to the early bound.
    const crowd = Array.from({ length: early }, (_, i) => exchange(path, `crowd${i % Math.ceil(early / 4)}`));
    for (const ask of crowd) expect(shedder.shed(ask.req, ask.res, classify("GET", path), ask.client)).toBeNull();
    const heavy = exchange(path, "crowd0");
    // Refused for its share, it waits for its answer as a client past its own limit does.
    expect(shedder.shed(heavy.req, heavy.res, classify("GET", path), heavy.client)?.delayMs).toBe(OVER_LIMIT_DELAY_MS);
    expect(shedder.lookupsOf("crowd0")).toBe(4);
    const polite = exchange(path, "polite");
    expect(shedder.shed(polite.req, polite.res, classify("GET", path), polite.client)).toBeNull();
    expect(shedder.lookupsOf("polite")).toBe(1);
    // Every request of a client is counted in its requests in progress, a lookup or not (the search queue weighs them).
    const page = exchange("/reasons", "polite");
    expect(shedder.shed(page.req, page.res, classify("GET", "/reasons"), page.client)).toBeNull();
    expect([shedder.requestsOf("polite"), shedder.lookupsOf("polite"), shedder.requestsOf("crowd0")]).toEqual([2, 1, 4]);
  });
});

describe("a client at its own limit is told so, whatever else is full", () => {
  it("with lookupsInInstance small enough that its share ends at its own limit: 429 lookups_in_progress, not 503 busy", () => {
    // IDENT_MAX_OUTBOUND=2: 10 lookups in the instance, 8 for a client that has some already, 8 a client's own.
    const settings = { ...defaults, lookupsInInstance: 10 };
    const refusals: string[] = [];
    const shedder = shedderWith({ settings, refused: (r) => refusals.push(r.refused) });
    const path = "/api/resolve?q=mine.test";
    for (let i = 0; i < 8; i++) {
      const { req, res } = exchange(path, "one");
      expect(shedder.shed(req, res, classify("GET", path), "one")).toBeNull();
    }
    const over = exchange(path, "one");
    expect(shedder.shed(over.req, over.res, classify("GET", path), over.client)?.delayMs).toBe(OVER_LIMIT_DELAY_MS);
    expect(refusals).toEqual(["lookups_in_progress"]);
  });
});

describe("storeReads: the per-client limit of every route that reads the index and is not a lookup (docs/architecture.md#traffic)", () => {
  const reads = [
    "/entity/a.example/badge.svg",
    "/api/search?q=acme",
    "/api/changes",
    "/api/entity/a.example/history",
    "/",
    "/issuer/a.example",
    "/search?q=acme",
  ];
  const files = ["/changes.xml", "/entity/a.example/feed.xml", "/issuer/a.example/feed.xml", "/sitemap.xml", "/sitemaps/entities-1.xml"];
  const others = [
    "/entity/a.example",
    "/search?q=a.example",
    "/api/resolve?q=a.example",
    "/reasons",
    "/check?q=a.example",
    "/_next/static/x.js",
  ];

  it("is named by the badge, the index's pages, searches, changes, feeds and sitemaps, and by no lookup or other file", () => {
    for (const path of [...reads, ...files]) {
      expect(classify("GET", path).limits, path).toEqual(["storeReads"]);
      expect(classify("HEAD", path).limits, path).toEqual(["storeReads"]);
    }
    for (const path of others) expect(classify("GET", path).limits, path).toEqual([]);
    expect(classify("POST", "/recheck").limits).toEqual([]);
    // Another method reads nothing: a preflight is answered, anything else is 405, not a read.
    expect(classify("OPTIONS", "/api/changes").limits).toEqual([]);
    expect(classify("POST", "/api/search?q=acme").limits).toEqual([]);
    // A badge path that names no domain is 404 without a read.
    expect(classify("GET", "/entity/not%20a%20domain/badge.svg").limits).toEqual([]);
  });

  it("past it a client is refused 429 store_reads a second late, with Retry-After, in its route's form; another client reads on", async () => {
    const settings = trafficSettings({ storeReads: 3 });
    const windows = createWindows(settings);
    const refusals: string[] = [];
    const shedder = shedderWith({
      settings,
      refused: (r) => refusals.push(r.refused),
      take: (limit, client) => windows[limit].take(client),
    });
    const read = async (path: string, client: string) => {
      const { req, res } = exchange(path, client);
      const shed = await shedder.limited(req, res, classify("GET", path), client);
      shed?.write();
      return { shed, res };
    };
    for (let i = 0; i < 3; i++) expect((await read(`/entity/u${i}.example/badge.svg`, "one")).shed).toBeNull();
    const forms: Record<string, RegExp> = {
      "/entity/u9.example/badge.svg": /^image\/svg\+xml/,
      "/api/changes": /^application\/json/,
      "/changes.xml": /^application\/json/,
      "/issuer/a.example": /^text\/html/,
    };
    for (const [path, type] of Object.entries(forms)) {
      const { shed, res } = await read(path, "one");
      expect(shed?.delayMs, path).toBe(OVER_LIMIT_DELAY_MS);
      // CORS as the route's answers have it: the badge, the API and the feeds, not a page.
      expect(res.headers["Access-Control-Allow-Origin"], path).toBe(path.startsWith("/issuer/") ? undefined : "*");
      expect(res.status, path).toBe(429);
      expect(res.headers["Retry-After"], path).toMatch(/^[1-9]\d*$/);
      expect(res.headers["Cache-Control"], path).toBe("no-store");
      expect(res.headers["Content-Type"], path).toMatch(type);
    }
    expect(refusals).toEqual(Array(4).fill("store_reads"));
    // The badge's refusal is a badge, named by the refusal; the API's is its error body.
    expect(String((await read("/entity/u9.example/badge.svg", "one")).res.body)).toMatch(
      /^<svg [^>]*aria-label="ident: too many reads of the index for now"/,
    );
    const api = JSON.parse(String((await read("/api/changes", "one")).res.body)) as { error: { refused: string; message: string } };
    expect(api.error).toMatchObject({
      refused: "store_reads",
      message: expect.stringMatching(/^You have read this resolver's index 3 times this minute/),
    });
    expect((await read("/entity/u0.example/badge.svg", "two")).shed).toBeNull();
  });
});

describe("a response closed before it is counted in (its client gone while its route's limits were taken)", () => {
  it("is counted out at once: nothing of it stays in progress", () => {
    const shedder = shedderWith();
    const gone = exchange("/entity/a.example/badge.svg", "one");
    gone.res.destroyed = true;
    gone.res.emit("close");
    expect(shedder.shed(gone.req, gone.res, classify("GET", "/entity/a.example/badge.svg"), gone.client)).toBeNull();
    expect([shedder.inProgress.size, shedder.requestsOf("one")]).toEqual([0, 0]);
  });
});
