import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "ident-resolver/setup";
import { clientErrorAnswer, FRONT_HEADERS, frontDoor, guardServer, quietConsole, SERVER_TIMEOUTS } from "./front";
import { classify } from "./routes";

let server: Server;
let port = 0;
/** Requests that got past the front door, answered 200 as Next would. */
let passed = 0;

/** What the app gives the front door for its answers to `/api/` (web/app.ts: the rate-limit policy). */
const POLICY = { "RateLimit-Policy": '"cold";q=30;w=60, "search";q=120;w=60, "reads";q=600;w=60' };

beforeAll(async () => {
  server = createServer((req, res) => {
    if (frontDoor(req, res, classify(req.method ?? "GET", req.url ?? "/"), POLICY)) return;
    passed++;
    req.resume();
    req.on("end", () => res.end("next"));
  }).on("clientError", (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket) => {
    socket.end(clientErrorAnswer(err.code, err.rawPacket, POLICY));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

type Sent = { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer; hold?: boolean };

/** One raw request; with `hold`, the body is started and never finished, as a slow client's is. */
function send({ method = "GET", path, headers = {}, body, hold }: Sent) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; text: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    if (!hold) req.end();
  });
}

describe("the front door (docs/deploying.md#staying-up-in-public)", () => {
  it("every answer, its own and those it lets through, carries the security headers", async () => {
    for (const sent of [{ path: "/" }, { path: "/schemas/%ff.json" }, { path: "/_next/static/x.js" }]) {
      const r = await send(sent);
      for (const [name, value] of Object.entries(FRONT_HEADERS)) expect(r.headers[name.toLowerCase()], `${sent.path} ${name}`).toBe(value);
    }
  });
  it.each(["/schemas/%ff.json", "/schemas/%", "/%E0%A4%A", "/entity/%C0"])("%s: 400 in words, never reaching Next", async (path) => {
    const before = passed;
    const r = await send({ path });
    expect(r.status).toBe(400);
    expect(r.text).toBe("The path is not valid percent-encoded UTF-8.\n");
    expect(passed).toBe(before);
  });
  it("a malformed API path goes on to the API, which answers it with its own headers (web/api.ts, e2e/api.spec.ts)", async () => {
    const before = passed;
    await send({ path: "/api/entity/%FF/history" });
    expect(passed).toBe(before + 1);
  });
  it("a Server Action (this app has none) is 400, never reaching Next, which would log a stack trace", async () => {
    const r = await send({ method: "POST", path: "/", headers: { "next-action": "abc", "content-length": "0" } });
    expect(r.status).toBe(400);
    expect(r.text).toContain("no server actions");
  });
  it("a re-check form within its cap goes through", async () => {
    const r = await send({ method: "POST", path: "/recheck", headers: { "content-length": "18" }, body: "domain=alice.test&" });
    expect(r).toMatchObject({ status: 200, text: "next" });
  });
  it("a 12 MB body to the re-check is 413 at once, before a byte of it is read (the client has not finished sending it)", async () => {
    const r = await send({
      method: "POST",
      path: "/recheck",
      headers: { "content-length": String(12 * 1024 * 1024) },
      body: Buffer.alloc(64 * 1024),
      hold: true,
    });
    expect(r.status).toBe(413);
    expect(r.headers.connection).toBe("close");
    expect(r.text).toContain("at most 2048 bytes");
  });
  it("a body without a declared length is 411; a body where no route takes one is 413", async () => {
    const chunked = await send({
      method: "POST",
      path: "/recheck",
      headers: { "transfer-encoding": "chunked" },
      body: "domain=a",
      hold: true,
    });
    expect(chunked.status).toBe(411);
    const elsewhere = await send({ method: "POST", path: "/search", headers: { "content-length": "3" }, body: "x=1" });
    expect(elsewhere.status).toBe(413);
    const getWithBody = await send({ method: "GET", path: "/recheck", headers: { "content-length": "3" }, body: "x=1" });
    expect(getWithBody.status).toBe(413);
  });
  it.each(["PUT", "DELETE", "PATCH", "TRACE", "OPTIONS", "POST", "PROPFIND"])(
    "%s on a page, a feed or a file is 405 naming GET and HEAD, never reaching Next (docs/decisions.md#methods)",
    async (method) => {
      const before = passed;
      for (const path of ["/entity/alice.example", "/", "/entity/alice.example/feed.xml", "/_next/static/x.js", "/search?q=x"]) {
        const r = await send({ method, path });
        expect(r.status, `${method} ${path}`).toBe(405);
        expect(r.headers.allow).toBe("GET, HEAD");
        expect(r.headers["content-security-policy"]).toBe(FRONT_HEADERS["Content-Security-Policy"]);
      }
      expect(passed).toBe(before);
    },
  );
  it("the re-check's route takes its POST only; GET and HEAD pass through everywhere else", async () => {
    const get = await send({ path: "/recheck" });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe("POST");
    const before = passed;
    expect((await send({ method: "HEAD", path: "/entity/alice.example" })).status).toBe(200);
    expect((await send({ path: "/entity/alice.example" })).status).toBe(200);
    expect(passed).toBe(before + 2);
  });
  it("the API's methods are the API's own: any method to /api/ passes to it (web/api.ts answers 405 itself)", async () => {
    const before = passed;
    expect((await send({ method: "DELETE", path: "/api/resolve?q=a" })).status).toBe(200);
    expect(passed).toBe(before + 1);
  });
  it("its answers to /api/ (411, 413) carry CORS and the rate-limit policy, as every API answer does (docs/api.md#limits)", async () => {
    const large = await send({ method: "POST", path: "/api/search", headers: { "content-length": "3" }, body: "x=1" });
    const chunked = await send({ method: "POST", path: "/api/search", headers: { "transfer-encoding": "chunked" }, body: "x", hold: true });
    for (const r of [large, chunked]) {
      expect(r.headers["ratelimit-policy"]).toBe(POLICY["RateLimit-Policy"]);
      expect(r.headers["access-control-allow-origin"]).toBe("*");
      expect(JSON.parse(r.text)).toMatchObject({ error: { code: "invalid_request" } });
    }
    expect([large.status, chunked.status]).toEqual([413, 413]);
    // A page's refusal carries neither.
    const page = await send({ method: "POST", path: "/search", headers: { "content-length": "3" }, body: "x=1" });
    expect(page.headers["ratelimit-policy"]).toBeUndefined();
  });
});

describe("quietConsole: what Next writes is one log line, no stack trace (docs/deploying.md#logs)", () => {
  it("an error with its stack becomes its first line; the stack only at debug level", () => {
    for (const level of ["info", "debug"] as const) {
      const lines: string[] = [];
      const target = { error: (..._: unknown[]) => undefined, warn: (..._: unknown[]) => undefined };
      quietConsole(
        createLogger(level, (l) => lines.push(l)),
        target,
      );
      const err = new Error('The Server Reference ID did not match the expected format. Received "abc".');
      target.error(err);
      target.warn("⨯ %s", "a warning");
      const first = JSON.parse(lines[0] ?? "{}");
      expect(first).toMatchObject({
        level: "error",
        component: "next",
        msg: 'next: Error: The Server Reference ID did not match the expected format. Received "abc".',
      });
      if (level === "info") {
        expect(lines).toHaveLength(2);
        expect(lines.join("\n")).not.toMatch(/\n\s+at /);
        expect(lines.some((l) => l.includes("    at "))).toBe(false);
      } else expect(lines.some((l) => l.includes("    at "))).toBe(true);
      expect(JSON.parse(lines.at(-1) ?? "{}")).toMatchObject({ level: "warn", msg: "next: a warning" });
    }
  });
});

/** Raw bytes sent on a socket of their own, and everything the server answers before it closes. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (c: string) => (text += c));
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
  });
}

describe("clientErrorAnswer: what Node's parser refuses still carries the headers", () => {
  it("headers too large for /api/: 431 with CORS and the rate-limit policy, through Node's own parser; for a page, without them", async () => {
    const big = `x-filler: ${"a".repeat(20_000)}\r\n`;
    const api = await raw(`GET /api/search?q=alice HTTP/1.1\r\nHost: x\r\n${big}\r\n`);
    expect(api.split("\r\n")[0]).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(api).toContain(`RateLimit-Policy: ${POLICY["RateLimit-Policy"]}\r\n`);
    expect(api).toContain("Access-Control-Allow-Origin: *\r\n");
    const page = await raw(`GET /entity/alice.example HTTP/1.1\r\nHost: x\r\n${big}\r\n`);
    expect(page.split("\r\n")[0]).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(page).not.toContain("RateLimit-Policy");
  });
  it.each([
    ["HPE_INVALID_METHOD", 400],
    ["HPE_HEADER_OVERFLOW", 431],
    ["ERR_HTTP_REQUEST_TIMEOUT", 408],
    [undefined, 400],
  ] as const)("%s → %d, with every security header, then closed", (code, status) => {
    const raw = clientErrorAnswer(code);
    const [head = "", body] = raw.split("\r\n\r\n");
    expect(head.split("\r\n")[0]).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    for (const [name, value] of Object.entries(FRONT_HEADERS)) expect(head).toContain(`${name}: ${value}\r`);
    expect(head).toContain("Connection: close");
    expect(head).toContain(`Content-Length: ${Buffer.byteLength(body ?? "")}`);
  });
});

describe("guardServer: connections per client, and timeouts (docs/deploying.md#staying-up-in-public)", () => {
  it("past its connections, a client's next one is closed at once; another client is served meanwhile", async () => {
    let refused = 0;
    const guarded = createServer((_, res) => res.end("ok"));
    const gate = guardServer(guarded, { maxPerClient: 3, trustedHops: 0, refused: () => refused++ });
    expect(guarded.headersTimeout).toBe(SERVER_TIMEOUTS.headersMs);
    expect(guarded.requestTimeout).toBe(SERVER_TIMEOUTS.requestMs);
    expect(guarded.timeout).toBe(SERVER_TIMEOUTS.idleMs);
    await new Promise<void>((resolve) => guarded.listen(0, "127.0.0.1", resolve));
    const at = (guarded.address() as AddressInfo).port;
    const sockets: Socket[] = [];
    try {
      const closed: boolean[] = [];
      for (let i = 0; i < 5; i++) {
        const socket = connect({ host: "127.0.0.1", port: at, localAddress: "127.0.0.1" });
        sockets.push(socket);
        socket.on("error", () => undefined);
        const index = i;
        socket.on("close", () => (closed[index] = true));
        await new Promise((resolve) => socket.once("connect", resolve));
      }
      await vi.waitFor(() => expect(refused).toBe(2));
      await vi.waitFor(() => expect(closed.filter(Boolean)).toHaveLength(2));
      expect(gate.open("127.0.0.1")).toBe(3);
      // Another address (loopback has many) is its own client.
      const other = await new Promise<number>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port: at, localAddress: "127.0.0.2", agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });
      expect(other).toBe(200);
      // A connection closed gives its room back.
      sockets[0]?.destroy();
      await vi.waitFor(() => expect(gate.open("127.0.0.1")).toBe(2));
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => guarded.close(() => resolve()));
    }
  });
  it("a total beside the share (connectionsInInstance): 8 addresses holding 6 idle connections each against a total of 40 leave another address served; the idle ones of the addresses holding the most are closed, never the newcomer's", async () => {
    let refused = 0;
    const guarded = createServer((_, res) => res.end("ok"));
    const gate = guardServer(guarded, { maxPerClient: 10, maxOpen: () => 40, trustedHops: 0, refused: () => refused++ });
    await new Promise<void>((resolve) => guarded.listen(0, "127.0.0.1", resolve));
    const at = (guarded.address() as AddressInfo).port;
    const sockets: Socket[] = [];
    const open = (from: string) =>
      new Promise<Socket>((resolve) => {
        const socket = connect({ host: "127.0.0.1", port: at, localAddress: from });
        sockets.push(socket);
        socket.on("error", () => undefined);
        socket.once("connect", () => resolve(socket));
      });
    const ask = (from: string) =>
      new Promise<number>((resolve) => {
        const req = request({ host: "127.0.0.1", port: at, localAddress: from, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", () => resolve(0));
        req.end();
      });
    try {
      // 48 idle connections from 8 addresses, each within its share; the total holds 40.
      for (let round = 0; round < 6; round++) for (let a = 1; a <= 8; a++) await open(`127.0.3.${a}`);
      await vi.waitFor(() => expect(gate.open()).toBeLessThanOrEqual(40));
      expect(refused).toBeGreaterThanOrEqual(8);
      // The flood's addresses were evened out: none holds more than two over another.
      const held = Array.from({ length: 8 }, (_, a) => gate.open(`127.0.3.${a + 1}`));
      expect(Math.max(...held) - Math.min(...held)).toBeLessThanOrEqual(2);
      // Another address is answered every time, while the flood holds on.
      const answers = [];
      for (let i = 0; i < 20; i++) answers.push(await ask("127.0.3.200"));
      expect(answers).toEqual(Array(20).fill(200));
      // The newcomer holding the most is the one whose new connection is closed.
      const greedy: Socket[] = [];
      for (let i = 0; i < 10; i++) greedy.push(await open("127.0.3.100"));
      await vi.waitFor(() => expect(gate.open()).toBeLessThanOrEqual(40));
      const now = Array.from({ length: 8 }, (_, a) => gate.open(`127.0.3.${a + 1}`));
      expect(gate.open("127.0.3.100")).toBeLessThanOrEqual(Math.max(...now) + 1);
      expect(Math.min(...now)).toBeGreaterThan(0);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => guarded.close(() => resolve()));
    }
  });
  it("a silent socket, a header sent a byte at a time, a body trickled and an idle keep-alive are all closed by the server, on real sockets", async () => {
    // Node keeps an answered keep-alive connection 1 s past keepAliveTimeout (against races with the
    // client's reuse): idle is set past that, so each socket's closing time says which timeout did it.
    const timeouts = { headersMs: 400, requestMs: 800, idleMs: 3000, keepAliveMs: 300 };
    const guarded = createServer({ connectionsCheckingInterval: 50 }, (req, res) => {
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    guarded.on("clientError", (_err, socket: Socket) => socket.destroy());
    guardServer(guarded, { maxPerClient: 100, trustedHops: 0, timeouts });
    await new Promise<void>((resolve) => guarded.listen(0, "127.0.0.1", resolve));
    const at = (guarded.address() as AddressInfo).port;
    const timers: NodeJS.Timeout[] = [];
    /** A socket that does `behave` once connected; resolves with what it read once the server closed it. */
    const held = (behave: (s: Socket) => void) =>
      new Promise<{ read: string; ms: number }>((resolve) => {
        const s = connect({ host: "127.0.0.1", port: at });
        const t0 = performance.now();
        let read = "";
        s.setEncoding("utf8");
        s.on("data", (c: string) => (read += c));
        s.on("error", () => undefined);
        s.once("connect", () => behave(s));
        s.once("close", () => resolve({ read, ms: performance.now() - t0 }));
      });
    /** Writes `text` a byte every 50 ms, for ever (until the socket closes). */
    const trickle = (s: Socket, text: string) => {
      let i = 0;
      const t = setInterval(() => (s.destroyed ? clearInterval(t) : s.write(text[i++ % text.length] ?? "x")), 50);
      timers.push(t);
    };
    try {
      const [silent, slowHeaders, slowBody, keptAlive] = await Promise.all([
        held(() => undefined),
        held((s) => (s.write("GET / HTTP/1.1\r\nHost: a\r\n"), trickle(s, "X-Slow: aaaa"))),
        held((s) => (s.write("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n"), trickle(s, "b"))),
        held((s) => s.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n")),
      ]);
      // Closed without an answer, but the keep-alive one, answered first.
      expect(silent.read).toBe("");
      expect(slowHeaders.read).toBe("");
      expect(slowBody.read).toBe("");
      expect(keptAlive.read).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/);
      // Each by its own timeout, long before the idle one: were any of them not set, that socket would
      // stay open 3 s (the silent and trickling ones for ever, but for the idle timeout).
      for (const closed of [silent, slowHeaders, slowBody, keptAlive]) expect(closed.ms).toBeLessThan(timeouts.idleMs);
    } finally {
      for (const t of timers) clearInterval(t);
      await new Promise<void>((resolve) => guarded.close(() => resolve()));
    }
  }, 20_000);
  it("behind trusted proxies, connections are the proxy's: not counted per client here", async () => {
    const guarded = createServer((_, res) => res.end("ok"));
    const gate = guardServer(guarded, { maxPerClient: 1, trustedHops: 1 });
    await new Promise<void>((resolve) => guarded.listen(0, "127.0.0.1", resolve));
    const at = (guarded.address() as AddressInfo).port;
    try {
      const statuses = await Promise.all(
        [1, 2, 3].map(
          () =>
            new Promise<number>((resolve, reject) => {
              const req = request({ host: "127.0.0.1", port: at, agent: false }, (res) => {
                res.resume();
                resolve(res.statusCode ?? 0);
              });
              req.on("error", reject);
              req.end();
            }),
        ),
      );
      expect(statuses).toEqual([200, 200, 200]);
      expect(gate.open("127.0.0.1")).toBe(0);
    } finally {
      await new Promise<void>((resolve) => guarded.close(() => resolve()));
    }
  });
});
