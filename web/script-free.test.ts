import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aroundNext } from "./response";
import { classify } from "./routes";
import { isRuntimeTag, RuntimeStripper } from "./script-free";

/** As web/server.ts puts it around Next: the route's own reading of whether its page is read. */
const around = (req: IncomingMessage, res: ServerResponse) =>
  aroundNext(req, res, { head: { status: 200, headers: {} }, readPage: classify(req.method ?? "GET", req.url ?? "/").row.scriptFree });

const N = 'nonce="abc=="';
/** What Next writes for a streamed entity page, shortened: the runtime's tags among the page's own. */
const PAGE = [
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"/>`,
  `<link rel="preload" as="script" fetchPriority="low" ${N} href="/_next/static/chunks/a.js"/>`,
  `<link rel="modulepreload" href="/_next/static/chunks/m.js"/>`,
  `<link rel="preload" as="font" href="/font.woff2" crossorigin=""/>`,
  `<link rel="icon" href="/favicon.ico" sizes="32x32"/>`,
  `<script src="/_next/static/chunks/b.js" async="" ${N}></script>`,
  `<script ${N}>Object.defineProperty(window,"$RT",{get:function(){return -1e9}});</script>`,
  `<script src="/_next/static/chunks/poly.js" noModule="" ${N}></script></head><body>`,
  `<script ${N} id="_R_">(globalThis["TURBOPACK"] || (globalThis["TURBOPACK"] = [])).push({"otherChunks":[]});</script>`,
  `<script ${N}>(self.__next_f=self.__next_f||[]).push([0])</script>`,
  `<p>Text about &lt;script&gt; and &lt;link&gt;, and the name Ünïcødé 🙂 אבג</p><scripts-not></scripts-not><linked-data></linked-data>`,
  // Over the 1 KB below which nothing is compressed.
  `<ul>${"<li>claim</li>".repeat(80)}</ul>`,
  `<script ${N}>self.__next_f.push([1,"1:\\"$Sreact.fragment\\"\\n2:I[\\u003c/script\\u003e]"])</script>`,
  `<noscript><meta http-equiv="refresh" content="3"/></noscript>`,
  `<div hidden id="S:1"><h1 data-testid="entity-header">Zoë</h1></div><script ${N}>$RC("B:1","S:1")</script>`,
  `<script type="application/ld+json">{"@context":"https://schema.org","name":"\\u003c/script\\u003e"}</script>`,
  `</body></html>`,
].join("");
/** The same page as it should leave: only the runtime's tags are gone. */
const EXPECTED = [
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"/>`,
  `<link rel="preload" as="font" href="/font.woff2" crossorigin=""/>`,
  `<link rel="icon" href="/favicon.ico" sizes="32x32"/>`,
  `<script ${N}>Object.defineProperty(window,"$RT",{get:function(){return -1e9}});</script>`,
  `</head><body>`,
  `<template id="_R_"></template>`,
  `<p>Text about &lt;script&gt; and &lt;link&gt;, and the name Ünïcødé 🙂 אבג</p><scripts-not></scripts-not><linked-data></linked-data>`,
  // Over the 1 KB below which nothing is compressed.
  `<ul>${"<li>claim</li>".repeat(80)}</ul>`,
  `<noscript><meta http-equiv="refresh" content="3"/></noscript>`,
  `<div hidden id="S:1"><h1 data-testid="entity-header">Zoë</h1></div><script ${N}>$RC("B:1","S:1")</script>`,
  `<script type="application/ld+json">{"@context":"https://schema.org","name":"\\u003c/script\\u003e"}</script>`,
  `</body></html>`,
].join("");

function strip(chunks: (string | Buffer)[]): string {
  const s = new RuntimeStripper();
  return chunks.map((c) => s.push(c)).join("") + s.end();
}

describe("read pages without the framework's script (docs/decisions.md#cold-pages)", () => {
  it("removes the runtime's chunks, preloads and feeds, and keeps the page's own scripts, JSON-LD and text", () => {
    expect(strip([PAGE])).toBe(EXPECTED);
  });

  it("gives the same page however it is cut, even inside a tag or a character's bytes", () => {
    const bytes = Buffer.from(PAGE);
    for (let i = 0; i <= bytes.length; i++) {
      expect(strip([bytes.subarray(0, i), bytes.subarray(i)]), `cut at byte ${i}`).toBe(EXPECTED);
    }
    // Byte by byte.
    expect(strip([...bytes].map((b) => Buffer.from([b])))).toBe(EXPECTED);
  });

  it("sends what precedes a tag at once, and holds only a tag that has not ended", () => {
    const s = new RuntimeStripper();
    expect(s.push("<h1>Zoë</h1><scr")).toBe("<h1>Zoë</h1>");
    expect(s.push(`ipt ${N}>self.__next_f.push([1,"x`)).toBe("");
    expect(s.push(`"])</script><p>after</p>`)).toBe("<p>after</p>");
    // A page cut off inside a tag ends as it came.
    expect(s.push(`<script ${N}>$RC("B:1"`)).toBe("");
    expect(s.end()).toBe(`<script ${N}>$RC("B:1"`);
  });

  it("a long inline script arriving in many pieces is held whole, and dropped or kept whole", () => {
    const payload = "x".repeat(200_000);
    for (const [tag, kept] of [
      [`<script ${N}>self.__next_f.push([1,"${payload}"])</script>`, false],
      [`<script type="application/ld+json">{"a":"${payload}"}</script>`, true],
    ] as const) {
      const page = `<p>a</p>${tag}<p>b</p>`;
      const pieces: string[] = [];
      for (let i = 0; i < page.length; i += 997) pieces.push(page.slice(i, i + 997));
      expect(strip(pieces)).toBe(kept ? page : "<p>a</p><p>b</p>");
    }
  });

  it("many tags in one piece give what they give one by one", () => {
    const many = Array.from({ length: 2000 }, (_, i) =>
      i % 2 ? `<script ${N}>self.__next_f.push([1,"${i}"])</script>` : `<li>${i}</li>`,
    ).join("");
    const kept = Array.from({ length: 1000 }, (_, i) => `<li>${2 * i}</li>`).join("");
    expect(strip([many])).toBe(kept);
  });

  it("knows the runtime's tags from the page's own", () => {
    expect(isRuntimeTag(`<script src="/_next/static/chunks/x.js" async=""></script>`)).toBe(true);
    expect(isRuntimeTag(`<link rel="preload" as="script" href="/_next/static/chunks/x.js"/>`)).toBe(true);
    expect(isRuntimeTag(`<link rel="preload" as="style" href="/x.css"/>`)).toBe(false);
    expect(isRuntimeTag(`<script ${N}>$RC("B:0","S:0")</script>`)).toBe(false);
    expect(isRuntimeTag(`<script src="/elsewhere.js"></script>`)).toBe(false);
    expect(isRuntimeTag(`<script type="application/ld+json">{"name":"self.__next_f"}</script>`)).toBe(false);
  });

  it("applies to the pages that are read, not to the check or the API", () => {
    for (const path of ["/", "/entity/alice.example", "/issuer/tools.example", "/search", "/reasons"])
      expect(classify("GET", path).row.scriptFree, path).toBe(true);
    for (const path of [
      "/check",
      "/api/resolve",
      "/entity/alice.example/feed.xml",
      "/entity/alice.example/preview.png",
      "/_next/static/x.js",
    ])
      expect(classify("GET", path).row.scriptFree, path).toBe(false);
  });
});

describe("aroundNext on a server (web/server.ts's order: compression below, the rewrite above)", () => {
  let server: Server;
  let base = "";
  /** Writes PAGE in two pieces as Next streams, with the status and type the path asks for. */
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    around(req, res);
    const url = new URL(req.url ?? "/", "http://x");
    res.statusCode = Number(url.searchParams.get("status") ?? 200);
    res.setHeader("content-type", url.searchParams.get("type") ?? "text/html; charset=utf-8");
    if (url.searchParams.has("whole")) {
      res.setHeader("content-length", Buffer.byteLength(PAGE));
      res.end(PAGE);
      return;
    }
    res.flushHeaders();
    const half = Math.floor(PAGE.length / 2);
    res.write(Buffer.from(PAGE.slice(0, half)));
    (res as ServerResponse & { flush?: () => void }).flush?.();
    // The second half only once the client has seen the first: streaming survives compression.
    const timer = setTimeout(() => res.end(Buffer.from(PAGE.slice(half))), 300);
    req.once("close", () => clearTimeout(timer));
  };
  beforeAll(async () => {
    server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  function get(path: string, encoding?: string) {
    return new Promise<{ status: number; headers: IncomingMessage["headers"]; body: Buffer; firstAt: number; endAt: number }>(
      (resolve, reject) => {
        const t0 = performance.now();
        let firstAt = NaN;
        request(`${base}${path}`, { headers: encoding ? { "accept-encoding": encoding } : {} }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => {
            if (Number.isNaN(firstAt)) firstAt = performance.now() - t0;
            chunks.push(c);
          });
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks),
              firstAt,
              endAt: performance.now() - t0,
            }),
          );
        })
          .on("error", reject)
          .end();
      },
    );
  }

  it("a read page leaves gzip-compressed without the runtime, its first part before the end", async () => {
    const r = await get("/entity/alice.example", "gzip");
    expect(r.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(r.body).toString()).toBe(EXPECTED);
    // The first half arrived while the server still held the second (300 ms later).
    expect(r.endAt - r.firstAt).toBeGreaterThan(150);
  });

  it("gzip only: a client that offers Brotli first gets gzip, one that takes only Brotli gets the page as it is", async () => {
    const both = await get("/entity/alice.example", "br, gzip");
    expect(both.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(both.body).toString()).toBe(EXPECTED);
    const brOnly = await get("/entity/alice.example", "br");
    expect(brOnly.headers["content-encoding"]).toBeUndefined();
    expect(brOnly.body.toString()).toBe(EXPECTED);
  });

  it("a whole page loses its Content-Length, which no longer holds, and arrives whole", async () => {
    const plain = await get("/entity/alice.example?whole=1");
    expect(plain.headers["content-length"]).toBeUndefined();
    expect(plain.body.toString()).toBe(EXPECTED);
    const zipped = await get("/entity/alice.example?whole=1", "gzip");
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(zipped.body).toString()).toBe(EXPECTED);
  });

  it("headers as Node's flat list, a string in another encoding, a character cut between a Buffer and the next piece, and callbacks", async () => {
    const called: string[] = [];
    let ended = () => {};
    const endCalled = new Promise<void>((r) => (ended = r));
    const server = createServer((req, res) => {
      around(req, res);
      res.writeHead(200, ["Content-Type", "text/html; charset=utf-8", "X-Two", "a", "X-Two", "b"]);
      const e = Buffer.from("é");
      res.write(Buffer.concat([Buffer.from("<p>caf"), e.subarray(0, 1)]), () => called.push("write"));
      res.write(e.subarray(1));
      res.write(Buffer.from(`</p><script ${N}>self.__next_f.push([0])</script>`).toString("hex"), "hex");
      res.end("<p>end</p>", () => {
        called.push("end");
        ended();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const port = (server.address() as AddressInfo).port;
      const got = await new Promise<{ headers: IncomingMessage["headers"]; body: string }>((resolve, reject) =>
        request(`http://127.0.0.1:${port}/entity/a.example`, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (body += c));
          res.on("end", () => resolve({ headers: res.headers, body }));
        })
          .on("error", reject)
          .end(),
      );
      expect(got.headers["x-two"]).toBe("a, b");
      expect(got.body).toBe("<p>café</p><p>end</p>");
      await endCalled;
      expect(called).toEqual(["write", "end"]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("the check, an error page and anything but HTML are left as Next wrote them", async () => {
    expect((await get("/check")).body.toString()).toBe(PAGE);
    expect((await get("/entity/alice.example?status=500")).body.toString()).toBe(PAGE);
    expect((await get("/search?type=text/plain")).body.toString()).toBe(PAGE);
    expect(gunzipSync((await get("/check", "gzip")).body).toString()).toBe(PAGE);
  });
});
