import { randomBytes } from "node:crypto";
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CACHE_HEADER, createPageCache, deflateParts, type PageVersion, gzipWithNonce, splitAt, withNonce } from "./page-cache";
import { FAILED_PARTS_SCRIPT, FAULT_MARKS } from "./failed-parts";
import { acceptsGzip } from "./response";
import { classify } from "./routes";

type Get = { status: number; headers: IncomingHttpHeaders; body: string };

/**
 * A server shaped like web/serve.js: the page cache in front of a stand-in for Next that writes
 * a page in chunks, with a fresh nonce in its CSP header and body, and counts its renders.
 */
type Opts = {
  version: () => string | PageVersion | null;
  generation?: () => number;
  now?: () => number;
  status?: number;
  type?: string;
  text?: () => string;
  maxBytes?: number;
  variant?: (ua: string) => string;
};

async function start(opts: Opts) {
  let renders = 0;
  const variant = opts.variant;
  const cache = createPageCache({
    version: async () => opts.version(),
    ...(opts.generation ? { generation: opts.generation } : {}),
    ...(opts.now ? { now: opts.now } : {}),
    maxBytes: opts.maxBytes,
    ...(variant ? { variant: (req: IncomingMessage) => variant(req.headers["user-agent"] ?? "") } : {}),
  });
  const server: Server = createServer((req, res) => {
    void cache.serve(req, res, classify(req.method ?? "GET", req.url ?? "/"), () => {
      renders++;
      const nonce = randomBytes(16).toString("base64");
      res.statusCode = opts.status ?? 200;
      res.setHeader("content-security-policy", `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'; style-src 'nonce-${nonce}'`);
      res.setHeader("content-type", opts.type ?? "text/html; charset=utf-8");
      res.write(`<!doctype html><script nonce="${nonce}">`);
      res.write(Buffer.from(`${opts.text?.() ?? "page"}</script><p>é `));
      res.end(`${JSON.stringify({ nonce })}</p>`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  servers.push(server);
  const get = (path = "/entity/a.example", headers: Record<string, string> = {}, method = "GET") =>
    new Promise<Get>((resolve, reject) => {
      request({ host: "127.0.0.1", port, path, headers, method }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const raw = Buffer.concat(chunks);
          const body = res.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: body.toString("utf8") });
        });
      })
        .on("error", reject)
        .end();
    });
  return { get, renders: () => renders, cache };
}

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

const nonceOf = (r: Get) => /'nonce-([^']+)'/.exec(String(r.headers["content-security-policy"]))?.[1] ?? "";

describe("page cache", () => {
  it("serves an unchanged page from the store, with a fresh nonce in the header and everywhere in the body", async () => {
    const s = await start({ version: () => "v1" });
    const first = await s.get();
    const again = [await s.get(), await s.get()];
    expect(s.renders()).toBe(1);
    expect(first.headers[CACHE_HEADER]).toBe("miss");
    const all = [first, ...again];
    expect(again.map((r) => r.headers[CACHE_HEADER])).toEqual(["hit", "hit"]);
    const nonces = all.map(nonceOf);
    expect(new Set(nonces).size).toBe(3);
    for (const [i, r] of all.entries()) {
      const nonce = nonces[i]!;
      expect(r.headers["content-security-policy"]).toBe(`script-src 'self' 'nonce-${nonce}' 'strict-dynamic'; style-src 'nonce-${nonce}'`);
      // The nonce of the copy it came from is nowhere; this response's is in every place.
      for (const other of nonces.filter((n) => n !== nonce)) expect(r.body).not.toContain(other);
      expect(r.body).toBe(`<!doctype html><script nonce="${nonce}">page</script><p>é {"nonce":"${nonce}"}</p>`);
      expect(r.headers["content-length"]).toBe(String(Buffer.byteLength(r.body)));
    }
  });

  it("renders again when the version changes, and stores the new page", async () => {
    let version = "v1";
    let text = "old";
    const s = await start({ version: () => version, text: () => text });
    await s.get();
    version = "v2";
    text = "new";
    const changed = await s.get();
    const again = await s.get();
    expect(s.renders()).toBe(2);
    expect(changed.body).toContain("new");
    expect(again.headers[CACHE_HEADER]).toBe("hit");
    expect(again.body).toContain("new");
  });

  it("never stores a page whose version is unknown (not every document cached) or changed while it rendered", async () => {
    const unknown = await start({ version: () => null });
    await unknown.get();
    const r = await unknown.get();
    expect(unknown.renders()).toBe(2);
    expect(r.headers[CACHE_HEADER]).toBeUndefined();
    expect(unknown.cache.size).toBe(0);

    let n = 0;
    const moving = await start({ version: () => `v${n++}` });
    await moving.get();
    await moving.get();
    expect(moving.renders()).toBe(2);
    expect(moving.cache.size).toBe(0);
  });

  it("never stores a page that shows a fault (a part said failed, a boundary sent errored, one marked failed later): the next renders again", async () => {
    for (const fault of ['<p data-testid="part-failed">', "<!--$!-->", '$RX("B:0","digest")']) {
      let text = fault;
      const s = await start({ version: () => "v1", text: () => text });
      expect((await s.get()).body).toContain(fault);
      expect(s.cache.size).toBe(0);
      // Once the fault is gone, the page is stored as any other.
      text = "page";
      await s.get();
      expect((await s.get()).headers[CACHE_HEADER]).toBe("hit");
      expect(s.renders()).toBe(2);
    }
    // The script every page carries to say failed parts (web/failed-parts.ts) is no fault.
    for (const mark of FAULT_MARKS) expect(FAILED_PARTS_SCRIPT).not.toContain(mark);
  });

  it("renders, and stores nothing, when the version cannot be worked out", async () => {
    const s = await start({
      version: () => {
        throw new Error("resolver down");
      },
    });
    expect((await s.get()).status).toBe(200);
    expect((await s.get()).status).toBe(200);
    expect(s.renders()).toBe(2);
    expect(s.cache.size).toBe(0);
  });

  it.each([
    ["an error status", { status: 404 }],
    ["something that is not HTML", { type: "application/json" }],
  ])("does not store %s", async (_, opts) => {
    const s = await start({ version: () => "v1", ...opts });
    await s.get();
    await s.get();
    expect(s.renders()).toBe(2);
  });

  it.each([
    ["an RSC request", "/entity/a.example", { rsc: "1" }, "GET"],
    ["an RSC query", "/entity/a.example?_rsc=abc", {}, "GET"],
    ["a conditional request", "/entity/a.example", { "if-none-match": '"x"' }, "GET"],
    ["a HEAD request", "/entity/a.example", {}, "HEAD"],
    ["a POST", "/entity/a.example", {}, "POST"],
  ])("leaves %s to the renderer", async (_, path, headers, method) => {
    const s = await start({ version: () => "v1" });
    await s.get(path, headers, method);
    await s.get(path, headers, method);
    expect(s.renders()).toBe(2);
    expect(s.cache.size).toBe(0);
  });

  it("keeps one copy per client variant, and answers each variant from its own", async () => {
    const s = await start({ version: () => "v1", variant: (ua) => (ua === "browser" ? "browser" : "agent") });
    const first = [
      await s.get("/entity/a.example", { "user-agent": "browser" }),
      await s.get("/entity/a.example", { "user-agent": "curl/8" }),
    ];
    const program = await s.get("/entity/a.example", { "user-agent": "curl/8" });
    const browser = await s.get("/entity/a.example", { "user-agent": "browser" });
    expect(s.renders()).toBe(2);
    expect(first.map((r) => r.headers[CACHE_HEADER])).toEqual(["miss", "miss"]);
    expect([program, browser].map((r) => r.headers[CACHE_HEADER])).toEqual(["hit", "hit"]);
  });

  it("answers paths that are not URLs on their own (`//`, `//host/x`), never hanging", async () => {
    const s = await start({ version: () => "v1" });
    const answers = [await s.get("//"), await s.get("//evil.example/entity/a.example"), await s.get("//")];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
  });

  it("keys pages by the route's page: its path and the query parameters the page reads (web/routes.ts); 2,000 unused query strings are one page", async () => {
    const s = await start({ version: () => "v1" });
    await s.get("/entity/a.example");
    await s.get("/entity/b.example");
    expect(s.renders()).toBe(2);
    for (let i = 0; i < 2000; i++) await s.get(`/entity/a.example?x=${i}`);
    expect(s.renders()).toBe(2);
    expect(s.cache.size).toBe(2);
    // The parameters the page reads still make pages of their own, in whatever order they come.
    await s.get("/entity/a.example?recheck=busy&retry=5");
    await s.get("/entity/a.example?retry=5&x=3&recheck=busy");
    await s.get("/search?q=alice.example&utm=1");
    await s.get("/search?utm=2&q=alice.example");
    expect(s.renders()).toBe(4);
  });

  it("never keeps what its route says it may not: a check, an issuer's page link that is not one, a feed, a HEAD", async () => {
    const s = await start({ version: () => "v1" });
    for (const path of ["/check?q=alice.example", "/issuer/guild.example?after=x", "/entity/a.example/feed.xml"]) {
      await s.get(path);
      await s.get(path);
    }
    await s.get("/entity/a.example", {}, "HEAD");
    await s.get("/entity/a.example", {}, "HEAD");
    expect(s.renders()).toBe(8);
    expect(s.cache.size).toBe(0);
  });

  it("compresses for a client that takes gzip, stored or not, and the page is the same", async () => {
    const s = await start({ version: () => "v1" });
    const plain = await s.get();
    const missZipped = await s.get("/entity/b.example", { "accept-encoding": "gzip, br" });
    const hitZipped = await s.get("/entity/a.example", { "accept-encoding": "gzip" });
    const refused = await s.get("/entity/a.example", { "accept-encoding": "gzip;q=0, identity" });
    expect([plain, missZipped, hitZipped, refused].map((r) => r.headers["content-encoding"])).toEqual([
      undefined,
      "gzip",
      "gzip",
      undefined,
    ]);
    expect(hitZipped.body.split(nonceOf(hitZipped)).join("N")).toBe(plain.body.split(nonceOf(plain)).join("N"));
    expect(missZipped.body).toContain("<!doctype html>");
  });

  it("works a version out once while the generation reads the same and the clock is before its until; again when either moves", async () => {
    let generation = 1;
    let t = 1000;
    let text = "v1";
    const asked = vi.fn(() => ({ text, until: 2000 }));
    const s = await start({ version: asked, generation: () => generation, now: () => t });
    await s.get(); // worked out, then again after the render to see nothing changed meanwhile: 1 (memo)
    await s.get();
    await s.get();
    expect(asked).toHaveBeenCalledTimes(1);
    expect(s.renders()).toBe(1);
    // The documents changed: the version is asked for again, and the new page rendered.
    generation++;
    text = "v2";
    await s.get();
    expect(asked).toHaveBeenCalledTimes(2);
    expect(s.renders()).toBe(2);
    // Past its until (a document turned stale), asked again even though nothing was kept or dropped.
    t = 2000;
    const answered = await s.get();
    expect(asked).toHaveBeenCalledTimes(3);
    expect(answered.headers[CACHE_HEADER]).toBe("hit");
    // Without a generation, every request asks.
    const plain = vi.fn(() => ({ text: "v1", until: Infinity }));
    const p = await start({ version: plain });
    await p.get();
    await p.get();
    expect(plain.mock.calls.length).toBeGreaterThanOrEqual(3);
  });

  it("stays within its byte bound", async () => {
    const s = await start({ version: () => "v1", maxBytes: 4000, text: () => "x".repeat(1500) });
    for (const d of ["a", "b", "c", "d"]) await s.get(`/entity/${d}.example`);
    expect(s.cache.size).toBeLessThanOrEqual(2);
  });
  it("counts the memory its pages really hold: no view of zlib's 16 KiB chunks or the shared pool kept, whatever the number of pages", async () => {
    let n = 0;
    const s = await start({ version: () => "v1", maxBytes: 256 * 1024, text: () => `page ${n++} ${"y".repeat(300)}` });
    for (let i = 0; i < 400; i++) await s.get(`/entity/p${i}.example`);
    // Every stored buffer is a view of one allocation per page and kind, of exactly its bytes.
    expect(s.cache.heldBytes).toBeLessThanOrEqual(256 * 1024);
    expect(s.cache.size).toBeGreaterThan(50);
  });
});

describe("page cache helpers", () => {
  it("cuts a body at every nonce and joins it with another", () => {
    const body = Buffer.from("N-a-N-bN");
    expect(splitAt(body, "N").map(String)).toEqual(["", "-a-", "-b", ""]);
    expect(String(withNonce(splitAt(body, "N"), "XY"))).toBe("XY-a-XY-bXY");
    expect(String(withNonce(splitAt(Buffer.from("none"), "N"), "XY"))).toBe("none");
  });

  it.each([
    ["nonces inside", "<p n=N>a</p><script n=N></script>"],
    ["at both ends and side by side", "NN-a-NN"],
    ["no nonce", "<p>plain</p>"],
    ["nothing", ""],
    ["parts larger than a deflate window", `${"<li>x</li>".repeat(20_000)}N${randomBytes(100_000).toString("base64")}N`],
  ])("a stored page compressed once and sent with a fresh nonce gunzips to the page with that nonce (%s)", (_, text) => {
    const parts = splitAt(Buffer.from(text), "N");
    const deflated = deflateParts(parts);
    for (const nonce of ["XY", randomBytes(16).toString("base64")]) {
      // gunzipSync checks the CRC and the length in the trailer as well as the blocks.
      expect(gunzipSync(gzipWithNonce(parts, deflated, nonce)).equals(withNonce(parts, nonce))).toBe(true);
    }
  });

  it.each([
    ["gzip, deflate, br", true],
    ["br;q=1.0, gzip;q=0.8", true],
    ["*", true],
    ["gzip;q=0", false],
    ["gzip;q=0.0, identity", false],
    ["identity", false],
    [undefined, false],
  ])("Accept-Encoding %s takes gzip: %s", (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});
