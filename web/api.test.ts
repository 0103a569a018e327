/**
 * The API's warm answers (docs/api.md#speed): a lookup the cache answers is kept as sent, and sent
 * again only while the cache's answer for it is the same: a document fetched again, an answer past
 * the time it stood until, or `?refresh=1` each make it anew. Searches are kept 10 seconds. Every
 * answer carries CORS and the limits; a 200 its ETag. Each answer is checked against the OpenAPI document.
 */
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Probe } from "ident-resolver";
import type { SearchResponse } from "ident-resolver";
import type { Store } from "ident-resolver/store";
import type { IndexSearch } from "ident-resolver/store";
import { createWindows, trafficSettings } from "ident-resolver/traffic";
import { createSearchGate, searchGateOptions } from "ident-resolver/traffic";
import SwaggerParser from "@apidevtools/swagger-parser";
import { Ajv2020 } from "ajv/dist/2020.js";
import { createApi, isApiKind, type ApiDeps, type ApiReply, type ApiRequest } from "./api";
import { ROUTES, type RouteKind } from "./routes";
import { openApiDocument } from "./openapi";

type Operation = {
  responses: Record<string, { headers?: Record<string, unknown>; content?: { "application/json"?: { schema: object } } }>;
};
let paths: Promise<Record<string, Record<string, Operation>>> | null = null;
const ajv = new Ajv2020({ strict: false });

/**
 * Every answer these tests receive, checked against the API's own OpenAPI document: its status one
 * the route gives, its declared headers there, its body (uncompressed) valid by its schema.
 */
async function described(method: string, path: string, reply: ApiReply): Promise<void> {
  paths ??= SwaggerParser.dereference(structuredClone(openApiDocument()) as never).then(
    (d) => (d as unknown as { paths: Record<string, Record<string, Operation>> }).paths,
  );
  const all = await paths;
  const template = Object.keys(all).find((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(path));
  const operation = template ? all[template]?.[method === "HEAD" ? "get" : method.toLowerCase()] : undefined;
  if (!operation) return; // not one of the API's operations (a preflight, a method it refuses)
  const answer = operation.responses[String(reply.status)];
  if (!answer) throw new Error(`${method} ${path}: ${reply.status} is not an answer the document gives`);
  for (const name of Object.keys(answer.headers ?? {}))
    if (reply.headers[name] === undefined) throw new Error(`${method} ${path}: no ${name}`);
  const schema = answer.content?.["application/json"]?.schema;
  if (!schema || reply.body === null) return;
  const bytes = reply.headers["Content-Encoding"] === "gzip" ? gunzipSync(reply.body) : reply.body;
  const validate = ajv.compile(schema);
  if (!validate(JSON.parse(bytes.toString("utf8")))) throw new Error(`${method} ${path}: ${ajv.errorsText(validate.errors)}`);
}

const response = (name: string): SearchResponse => ({
  schema: "ident-resolver/search@1",
  query: { input: "alice.example", kind: "domain", domain: "alice.example" },
  results: [
    {
      entity: {
        status: "accepted",
        domain: "alice.example",
        details: { name, description: "A long description. ".repeat(100) },
        problems: [],
      },
      properties: [],
      credentials: [],
      connections: [],
      jsonld: null,
      cache: { fetched_at: "2026-05-01T08:00:00.000Z", stale: false },
    },
  ],
  problems: [],
});

/** A resolver whose cache holds `state.name`'s answer until `state.until`, in generation `state.generation`. */
function fixture() {
  const state = { name: "Alice", until: Date.now() + 60_000, generation: 1, remembered: 0, resolved: 0, searched: 0 };
  const search: IndexSearch = { schema: "ident-resolver/index-search@1", query: "alice", results: [], next_cursor: null };
  // A search takes a moment, as the engine's does: those asked meanwhile find it running.
  const store = {
    search: async () => (state.searched++, await new Promise((r) => setTimeout(r, 20)), search),
    history: async () => null,
    changes: async () => {
      throw new Error("this index keeps no changes");
    },
  } as unknown as Store;
  const resolver = {
    probe: async (): Promise<Probe> => ({ state: "cached", response: response(state.name), until: state.until }),
    remember: async (r: SearchResponse) => (state.remembered++, r),
    resolve: async () => (state.resolved++, response(`${state.name} (fetched)`)),
    generation: () => state.generation,
    traffic: {
      settings: trafficSettings(),
      windows: createWindows(trafficSettings()),
      outbound: { full: () => false, retryAfterS: 1 },
      searches: createSearchGate({ atOnce: 4, waiting: 16, perClient: 2 }),
    },
    metrics: { refusals: { inc: () => undefined } },
    store: Promise.resolve(store),
  } as unknown as ApiDeps["resolver"];
  const log = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined } as unknown as ApiDeps["log"];
  const api = createApi({ resolver, log, clientOf: () => "192.0.2.1" });
  const get = async (target: string, headers: Record<string, string> = {}, method = "GET") => {
    const url = new URL(target, "http://localhost");
    const request: ApiRequest = {
      method,
      path: url.pathname,
      params: url.searchParams,
      client: "192.0.2.1",
      header: (n) => headers[n] ?? null,
    };
    const reply = await api.answer(request);
    await described(method, url.pathname, reply);
    return reply;
  };
  const name = async (target: string) => JSON.parse(String((await get(target)).body)).results[0].entity.details.name as string;
  return { state, get, name };
}

describe("warm lookups (docs/api.md#speed)", () => {
  it("are made once while the cache's answer stands, then sent as they were", async () => {
    const { state, get, name } = fixture();
    const first = await get("/api/resolve?q=alice.example");
    expect(first.status).toBe(200);
    expect(await name("/api/resolve?q=alice.example")).toBe("Alice");
    expect(await name("/api/resolve?q=%20alice.example%20")).toBe("Alice");
    // Annotated from the index once, by the first request; the others were sent as kept.
    expect(state.remembered).toBe(1);
    const again = await get("/api/resolve?q=alice.example");
    expect(again.body?.equals(first.body!)).toBe(true);
    expect(again.headers.ETag).toBe(first.headers.ETag);
  });
  it("a document fetched again (the generation moves) with a new answer: made anew", async () => {
    const { state, name } = fixture();
    expect(await name("/api/resolve?q=alice.example")).toBe("Alice");
    state.name = "Alice Moreau";
    // Same generation, before `until`: the answer is still the cache's as it was worked out.
    expect(await name("/api/resolve?q=alice.example")).toBe("Alice");
    state.generation++;
    expect(await name("/api/resolve?q=alice.example")).toBe("Alice Moreau");
  });
  it("past the time the answer stood until: worked out again", async () => {
    const { state, name } = fixture();
    state.until = Date.now() + 40;
    expect(await name("/api/resolve?q=alice.example")).toBe("Alice");
    state.name = "Alice, stale";
    expect(await name("/api/resolve?q=alice.example")).toBe("Alice");
    await new Promise((r) => setTimeout(r, 60));
    expect(await name("/api/resolve?q=alice.example")).toBe("Alice, stale");
  });
  it("?refresh=1 is never answered from what is kept", async () => {
    const { state, name } = fixture();
    expect(await name("/api/resolve?q=alice.example")).toBe("Alice");
    expect(await name("/api/resolve?q=alice.example&refresh=1")).toBe("Alice (fetched)");
    expect(state.resolved).toBe(1);
  });
});

describe("every answer", () => {
  it("carries CORS and both limits; a 200 an ETag, and If-None-Match with it is 304 without a body", async () => {
    const { get } = fixture();
    const ok = await get("/api/resolve?q=alice.example");
    expect(ok.headers).toMatchObject({ "Access-Control-Allow-Origin": "*", ETag: expect.stringMatching(/^"/) });
    expect(ok.headers["RateLimit-Policy"]).toMatch(/^"cold";q=\d+;w=60, "search";q=\d+;w=60, "reads";q=\d+;w=60$/);
    const not = await get("/api/resolve?q=alice.example", { "if-none-match": ok.headers.ETag! });
    expect(not).toMatchObject({ status: 304, body: null });
    expect(not.headers.ETag).toBe(ok.headers.ETag);
    // One client's counters only on an answer no shared cache keeps (docs/api.md#limits).
    expect(ok.headers["Cache-Control"]).toMatch(/^public/);
    expect(ok.headers.RateLimit).toBeUndefined();
    expect(not.headers.RateLimit).toBeUndefined();
    expect(not.headers["RateLimit-Policy"]).toBe(ok.headers["RateLimit-Policy"]);
    const bad = await get("/api/resolve?q=not%20a%20query");
    expect(bad.status).toBe(400);
    expect(bad.headers["Cache-Control"]).toBe("no-store");
    expect(bad.headers.RateLimit).toMatch(/^"cold";r=\d+;t=\d+, "search";r=\d+;t=\d+, "reads";r=\d+;t=\d+$/);
    expect(bad.headers["RateLimit-Policy"]).toBe(ok.headers["RateLimit-Policy"]);
    expect(bad.headers.ETag).toBeUndefined();
  });
  it("compressed for a client that takes gzip, with a tag of its own; small answers are sent as they are", async () => {
    const { get } = fixture();
    const plain = await get("/api/resolve?q=alice.example");
    expect(plain.body!.length).toBeGreaterThan(1024);
    const gz = await get("/api/resolve?q=alice.example", { "accept-encoding": "gzip, br" });
    expect(gz.headers["Content-Encoding"]).toBe("gzip");
    expect(gunzipSync(gz.body!).equals(plain.body!)).toBe(true);
    expect(gz.headers.ETag).not.toBe(plain.headers.ETag);
    expect(gz.headers.Vary).toBe("Accept-Encoding");
    expect((await get("/api/resolve?q=alice.example", { "accept-encoding": "gzip", "if-none-match": gz.headers.ETag! })).status).toBe(304);
    const small = await get("/api/search?q=alice", { "accept-encoding": "gzip" });
    expect(small.body!.length).toBeLessThan(1024);
    expect(small.headers["Content-Encoding"]).toBeUndefined();
  });
  it("a search spends one of the client's searches, even when it is answered from the last 10 s", async () => {
    const { state, get } = fixture();
    // What is left is read from answers no shared cache keeps (a bad request spends nothing).
    const left = async () => Number(/"search";r=(\d+)/.exec((await get("/api/search?q=")).headers.RateLimit ?? "")?.[1]);
    const before = await left();
    const a = await get("/api/search?q=alice");
    const b = await get("/api/search?q=alice");
    expect(state.searched).toBe(1);
    expect([a.headers.RateLimit, b.headers.RateLimit]).toEqual([undefined, undefined]);
    expect(await left()).toBe(before - 2);
  });
  it("answers every row whose handler is web/api.ts, and admits each as its row says: the history spends no search, the changes one", async () => {
    const own = (Object.keys(ROUTES) as RouteKind[]).filter((kind) => ROUTES[kind].handler === "web/api.ts");
    expect(own.filter((kind) => !isApiKind(kind))).toEqual([]);
    expect((Object.keys(ROUTES) as RouteKind[]).filter((kind) => isApiKind(kind) && !own.includes(kind))).toEqual([]);
    expect([ROUTES["api:history"].admission, ROUTES["api:changes"].admission]).toEqual([null, "search"]);
    const { get } = fixture();
    const left = async () => Number(/"search";r=(\d+)/.exec((await get("/api/search?q=")).headers.RateLimit ?? "")?.[1]);
    const before = await left();
    expect(before).toBeGreaterThan(1);
    expect((await get("/api/entity/alice.example/history")).status).toBe(404);
    expect(await left()).toBe(before);
    expect((await get("/api/changes")).status).toBe(503);
    expect(await left()).toBe(before - 1);
  });
  it("the same search asked 8 times at once by one client is run once: none is refused for the client's searches in progress", async () => {
    const { state, get } = fixture();
    const answers = await Promise.all(Array.from({ length: 8 }, () => get("/api/search?q=alice")));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(state.searched).toBe(1);
  });
  it("a preflight is 204; another method 405 naming the ones it takes; HEAD has no body", async () => {
    const { get } = fixture();
    const preflight = await get("/api/search?q=a", {}, "OPTIONS");
    expect(preflight).toMatchObject({ status: 204, body: null });
    expect(preflight.headers).toMatchObject({ "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS" });
    const put = await get("/api/resolve?q=alice.example", {}, "PUT");
    expect(put.status).toBe(405);
    expect(put.headers.Allow).toBe("GET, HEAD, OPTIONS");
    const head = await get("/api/resolve?q=alice.example", {}, "HEAD");
    expect(head).toMatchObject({ status: 200, body: null });
    expect(Number(head.headers["Content-Length"])).toBeGreaterThan(0);
  });
});

describe("searches at once (docs/architecture.md#traffic: searchesAtOnce, searchesWaiting, searchesInProgress)", () => {
  /** The API on an embedded engine's gate, each client its own address, a search that takes `ms`. */
  function crowd(ms: number) {
    const search: IndexSearch = { schema: "ident-resolver/index-search@1", query: "alice", results: [], next_cursor: null };
    let running = 0;
    let most = 0;
    const store = {
      search: async () => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, ms));
        running--;
        return search;
      },
    } as unknown as Store;
    const settings = trafficSettings({ searches: 1_000_000 });
    const resolver = {
      traffic: {
        settings,
        windows: createWindows(settings),
        outbound: { full: () => false, retryAfterS: 1 },
        searches: createSearchGate(searchGateOptions("embedded", settings)),
      },
      metrics: { refusals: { inc: () => undefined } },
      store: Promise.resolve(store),
    } as unknown as ApiDeps["resolver"];
    const log = {
      error: () => undefined,
      warn: () => undefined,
      info: () => undefined,
      debug: () => undefined,
    } as unknown as ApiDeps["log"];
    const api = createApi({ resolver, log, clientOf: (forwardedFor) => forwardedFor ?? "192.0.2.1" });
    const ask = async (client: string, q: string) => {
      const t0 = performance.now();
      const url = new URL(`/api/search?q=${encodeURIComponent(q)}`, "http://localhost");
      const headers: Record<string, string> = { "x-forwarded-for": client };
      const reply = await api.answer({
        method: "GET",
        path: url.pathname,
        params: url.searchParams,
        client,
        header: (n) => headers[n] ?? null,
      });
      const body = JSON.parse(String(reply.body)) as { error?: { refused?: string } };
      return { status: reply.status, refused: body.error?.refused, retryAfter: reply.headers["Retry-After"], ms: performance.now() - t0 };
    };
    return { ask, most: () => most };
  }

  it("many addresses at once: one search runs on the embedded engine, 16 wait, the rest are 503 search_busy with Retry-After, a second late", async () => {
    const { ask, most } = crowd(30);
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => ask(`198.51.100.${i}`, `word ${i}`)));
    expect(most()).toBe(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(17);
    const busy = answers.filter((a) => a.status === 503);
    expect(busy).toHaveLength(7);
    for (const b of busy) {
      expect(b).toMatchObject({ refused: "search_busy", retryAfter: expect.stringMatching(/^\d+$/) });
      // Answered a second late: a client that asks again at once asks once a second.
      expect(b.ms).toBeGreaterThanOrEqual(990);
    }
  });
  it("one client has 2 searches in progress; its third is 429 searches_in_progress while another address searches on", async () => {
    const { ask } = crowd(50);
    const mine = [ask("203.0.113.1", "one"), ask("203.0.113.1", "two"), ask("203.0.113.1", "three")];
    const other = ask("203.0.113.2", "four");
    const [a, b, c] = await Promise.all(mine);
    expect([a?.status, b?.status, c?.status]).toEqual([200, 200, 429]);
    expect(c).toMatchObject({ refused: "searches_in_progress", retryAfter: expect.stringMatching(/^\d+$/) });
    expect((await other).status).toBe(200);
  });
  it("a full queue of busy addresses still takes a newcomer's search, refusing a busy one's instead", async () => {
    const { ask } = crowd(20);
    // 16 addresses that have searched before, then fill the line again.
    await Promise.all(Array.from({ length: 16 }, (_, i) => ask(`192.0.2.${i + 10}`, `warm ${i}`)));
    const busy = Array.from({ length: 17 }, (_, i) => ask(`192.0.2.${(i % 16) + 10}`, `again ${i}`));
    await new Promise((r) => setTimeout(r, 5));
    const newcomer = await ask("192.0.2.200", "newcomer");
    expect(newcomer.status).toBe(200);
    expect((await Promise.all(busy)).some((a) => a.refused === "search_busy")).toBe(true);
  });
});
