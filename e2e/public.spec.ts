/**
 * Staying up in public (docs/deploying.md#staying-up-in-public), against a server of this file's
 * own whose every log line is read: what a stranger sends (a 16 KB path, a Server Action, a malformed
 * path, a 12 MB body) never writes a stack trace or a line over 1 KiB, never answers 500, and every
 * answer carries the security headers.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { ready, startServer } from "./helpers/server";

test.describe.configure({ mode: "serial", timeout: 120_000 });

const PORT = 3112;
let server: ChildProcess;
let logged = "";

test.beforeAll(async ({ request }) => {
  test.setTimeout(120_000);
  server = spawn(process.execPath, [path.resolve("web/serve.js")], {
    env: {
      ...process.env,
      PORT: String(PORT),
      IDENT_DATA_DIR: ":memory:",
      IDENT_CRAWL: "0",
      IDENT_CONNECT_TO: "::127.0.0.1:9",
      IDENT_METRICS_ADDR: `127.0.0.1:${PORT + 6000}`,
      IDENT_TRUSTED_HOPS: "1",
      IDENT_SEARCHES_PER_MIN: "3",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [server.stdout, server.stderr]) {
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => (logged += chunk));
  }
  await ready(request, PORT, server);
});
test.afterAll(() => {
  server?.kill("SIGTERM");
});

/** Every process below `root` (children, theirs, …), from /proc. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid …: the command may hold spaces and parentheses, so read after the last ")".
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const below = (pid: number): number[] =>
    [...parentOf].filter(([, parent]) => parent === pid).flatMap(([child]) => [child, ...below(child)]);
  return below(root);
}

/** One raw request on a connection of its own; `declared` bytes said in Content-Length, `sent` of them sent. */
function send(method: string, target: string, headers: Record<string, string> = {}, sent?: Buffer) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port: PORT, method, path: target, headers, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on("error", reject);
    if (sent) req.write(sent);
    else req.end();
  });
}

test("a stranger's requests: no stack trace, no log line over 1 KiB, no 500, the security headers on every answer", async () => {
  const from = logged.length;
  const answers = [
    await send("GET", `/${"a".repeat(16_000)}`),
    await send("GET", `/entity/${"b".repeat(16_000)}.test`),
    await send("POST", "/", { "next-action": "abc", "content-length": "0" }),
    await send("POST", "/", { "next-action": "7f".repeat(21), "content-type": "text/plain;charset=UTF-8", "content-length": "0" }),
    await send("GET", "/schemas/%ff.json"),
    await send("GET", "/schemas/%"),
    await send("POST", "/recheck", { "content-length": String(12 * 1024 * 1024) }, Buffer.alloc(64 * 1024)),
    await send("GET", "/_next/static/nope.js"),
    await send("GET", "/search/"),
  ];
  for (const a of answers) {
    expect(a.status).toBeLessThan(500);
    expect(a.headers["x-content-type-options"]).toBe("nosniff");
    expect(a.headers["content-security-policy"]).toBeTruthy();
  }
  expect(answers.map((a) => a.status)).toEqual([404, 404, 400, 400, 400, 400, 413, 404, 308]);
  await new Promise((r) => setTimeout(r, 500)); // the last request lines
  const lines = logged.slice(from).split("\n").filter(Boolean);
  expect(lines.length).toBeGreaterThanOrEqual(answers.length);
  for (const line of lines) {
    expect(Buffer.byteLength(line), line.slice(0, 200)).toBeLessThanOrEqual(1024);
    expect(line).not.toMatch(/^\s+at |\\n\s+at /);
    expect(() => JSON.parse(line), line.slice(0, 200)).not.toThrow();
  }
});

test("methods a page does not take (TRACE, PUT, DELETE, PATCH, OPTIONS): 405 with Allow, never a 500 or an error line (docs/decisions.md#methods)", async () => {
  const from = logged.length;
  for (const method of ["TRACE", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
    for (const target of ["/", "/entity/alice.example", "/search?q=alice", "/robots.txt", "/recheck"]) {
      const a = await send(method, target, method === "TRACE" ? {} : { "content-length": "0" });
      expect(a.status, `${method} ${target}`).toBe(405);
      expect(a.headers.allow, `${method} ${target}`).toBe(target === "/recheck" ? "POST" : "GET, HEAD");
      expect(a.headers["content-security-policy"]).toBeTruthy();
    }
  }
  expect((await send("GET", "/recheck")).status).toBe(405);
  await new Promise((r) => setTimeout(r, 500)); // the last request lines
  const lines = logged.slice(from).split("\n").filter(Boolean);
  expect(lines.filter((l) => /"level":"(error|warn)"/.test(l))).toEqual([]);
});

/**
 * One raw request (`head`: its request line and headers), and the status line and headers of its
 * answer, on a client that never closes its side. Once the server has ended its own, the client
 * writes on until the server's reset: a server that closed the connection whole answers with one, a
 * socket it kept half open (holding its descriptor) takes the bytes. Rejected if no reset came in 5 s.
 */
function raw(head: string) {
  return new Promise<{ status: number; headers: string; closed: boolean }>((resolve, reject) => {
    const socket: Socket = connect({ host: "127.0.0.1", port: PORT, allowHalfOpen: true });
    let got = "";
    let ended = false;
    let probe: NodeJS.Timeout | undefined;
    const kept = setTimeout(() => {
      clearInterval(probe);
      socket.destroy();
      reject(new Error(`the server kept the connection open 5 s after answering: ${JSON.stringify(got.slice(0, 40))}`));
    }, 5000);
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (got += chunk));
    socket.on("end", () => {
      ended = true;
      probe = setInterval(() => socket.write("x"), 100);
    });
    // Before the server's end, an error is the test's failure; after it, the reset looked for.
    socket.on("error", (err) => (ended ? undefined : reject(err)));
    socket.on("close", () => {
      clearTimeout(kept);
      clearInterval(probe);
      const [headers = ""] = got.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0), headers: headers.toLowerCase(), closed: ended });
    });
    socket.write(`${head}\r\n\r\n`);
  });
}

test("CONNECT takes the way of every method: 405 with Allow on a page or an API route, 400 for host:port, never a reset (docs/decisions.md#methods)", async () => {
  const from = logged.length;
  for (const [target, allow] of [
    ["/", "get, head"],
    ["/entity/alice.example", "get, head"],
    ["/recheck", "post"],
    ["/api/search?q=alice", "get, head, options"],
    ["/entity/alice.example/badge.svg", "get, head"],
  ] as const) {
    const a = await raw(`CONNECT ${target} HTTP/1.1\r\nHost: 127.0.0.1`);
    expect(a.status, target).toBe(405);
    expect(a.headers, target).toContain(`\r\nallow: ${allow}`);
    expect(a.headers, target).toContain("x-content-type-options: nosniff");
  }
  const authority = await raw("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443");
  expect(authority.status).toBe(400);
  await new Promise((r) => setTimeout(r, 500)); // the last request lines
  const lines = logged.slice(from).split("\n").filter(Boolean);
  expect(lines.filter((l) => /"level":"(error|warn)"/.test(l))).toEqual([]);
});

test("/metrics is on the operators' listener only: 404 on the public port, Prometheus text on IDENT_METRICS_ADDR", async ({ request }) => {
  const onPublic = await request.get(`http://127.0.0.1:${PORT}/metrics`);
  expect(onPublic.status()).toBe(404);
  expect(await onPublic.text()).not.toContain("ident_fetches_total");
  const operators = await request.get(`http://127.0.0.1:${PORT + 6000}/metrics`);
  expect(operators.status()).toBe(200);
  expect(operators.headers()["content-type"]).toContain("text/plain");
  expect(await operators.text()).toMatch(/^# TYPE ident_fetches_total counter$/m);
});

test("searches: past IDENT_SEARCHES_PER_MIN a client's searches are 429 with Retry-After, the API's and the page's together; the page says why; another client searches on", async ({
  page,
  request,
}) => {
  const as = (client: string) => ({ "x-forwarded-for": client });
  const search = (client: string) => request.get(`http://127.0.0.1:${PORT}/api/search?q=furniture+maker`, { headers: as(client) });
  expect((await search("198.51.100.31")).status()).toBe(200);
  expect((await search("198.51.100.31")).status()).toBe(200);
  await page.setExtraHTTPHeaders(as("198.51.100.31"));
  expect((await page.goto(`http://127.0.0.1:${PORT}/search?q=furniture+maker`))?.status()).toBe(200);
  const refused = await search("198.51.100.31");
  expect(refused.status()).toBe(429);
  expect(refused.headers()["retry-after"]).toMatch(/^\d+$/);
  expect((await refused.json()).error).toMatchObject({ code: "rate_limited", refused: "searches", retry_after_s: expect.any(Number) });
  const response = await page.goto(`http://127.0.0.1:${PORT}/search?q=joinery+notes`);
  expect(response?.status()).toBe(429);
  await expect(page.getByRole("heading", { name: "Too many searches for now" })).toBeVisible();
  await expect(page.getByTestId("refusal")).toContainText(
    "you have made the 3 searches of the index a minute one client may".replace(/^y/, "Y"),
  );
  await expect(page.getByRole("searchbox")).toHaveValue("joinery notes");
  expect((await search("198.51.100.32")).status()).toBe(200);
});

test("sitemaps count as searches: past IDENT_SEARCHES_PER_MIN a client's sitemap reads are 429 with Retry-After; another client reads on", async ({
  request,
}) => {
  const as = (client: string) => ({ headers: { "x-forwarded-for": client } });
  const get = (client: string, p: string) => request.get(`http://127.0.0.1:${PORT}${p}`, as(client));
  expect((await get("198.51.100.41", "/sitemap.xml")).status()).toBe(200);
  expect((await get("198.51.100.41", "/sitemaps/0.xml")).status()).toBe(200);
  expect((await get("198.51.100.41", "/sitemaps/0.xml")).status()).toBe(200);
  const refused = await get("198.51.100.41", "/sitemaps/0.xml");
  expect(refused.status()).toBe(429);
  expect(refused.headers()["retry-after"]).toMatch(/^\d+$/);
  expect((await refused.json()).error).toMatchObject({ refused: "searches" });
  expect((await get("198.51.100.42", "/sitemaps/0.xml")).status()).toBe(200);
  // robots.txt reads nothing of the index: never counted.
  for (let i = 0; i < 5; i++) expect((await get("198.51.100.41", "/robots.txt")).status()).toBe(200);
});

test("badges: past IDENT_STORE_READS_PER_MIN a client's badges are 429 store_reads, a grey badge a browser draws, with every refusal's headers; another client's badge is drawn", async ({
  page,
  request,
}) => {
  const get = (client: string, p: string) => request.get(`http://127.0.0.1:${PORT}${p}`, { headers: { "x-forwarded-for": client } });
  const badge = (n: number) => `/entity/reader${n}.badges.test/badge.svg`;
  // 600 a minute, the default: the badges of 600 domains the index does not know, 50 at a time.
  for (let n = 0; n < 600; n += 50) {
    const statuses = await Promise.all(Array.from({ length: 50 }, (_, k) => get("198.51.100.51", badge(n + k)).then((r) => r.status())));
    expect(new Set(statuses)).toEqual(new Set([200]));
  }
  const refused = await get("198.51.100.51", badge(600));
  expect(refused.status()).toBe(429);
  const headers = refused.headers();
  expect(headers["retry-after"]).toMatch(/^[1-9]\d*$/);
  expect(headers["cache-control"]).toBe("no-store");
  expect(headers["content-type"]).toBe("image/svg+xml; charset=utf-8");
  expect(await refused.text()).toMatch(/^<svg [^>]*aria-label="ident: too many reads of the index for now"/);
  // The same headers as the API's refusal of the same client, past the same limit.
  const api = await get("198.51.100.51", "/api/changes");
  expect(api.status()).toBe(429);
  expect((await api.json()).error).toMatchObject({ code: "rate_limited", refused: "store_reads" });
  for (const name of ["x-content-type-options", "referrer-policy", "x-frame-options", "cache-control", "access-control-allow-origin"])
    expect(headers[name], name).toBe(api.headers()[name]);
  // A page that embeds it shows an image, not a broken one.
  await page.setExtraHTTPHeaders({ "x-forwarded-for": "198.51.100.51" });
  await page.setContent(`<img alt="badge" src="http://127.0.0.1:${PORT}${badge(601)}">`);
  await expect.poll(() => page.locator("img").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
  // Another client reads on.
  expect((await get("198.51.100.52", badge(0))).status()).toBe(200);
});

test("the embedded engine killed: /readyz says `store: restarting`, then ready again within seconds; /healthz stays 200", async ({
  request,
}) => {
  const engine = descendants(server.pid ?? 0).find((pid) =>
    /pglite-engine(?:\.[\w-]+)?\.mjs/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8")),
  );
  if (!engine) throw new Error("no engine process under the server");
  const readyz = async () => {
    const r = await request.get(`http://127.0.0.1:${PORT}/readyz`);
    return { status: r.status(), store: (await r.json()).checks.store };
  };
  expect((await readyz()).status).toBe(200);
  process.kill(engine, "SIGKILL");
  await expect.poll(readyz, { timeout: 5000, intervals: [50] }).toEqual({ status: 503, store: { ok: false, detail: "restarting" } });
  expect((await request.get(`http://127.0.0.1:${PORT}/healthz`)).status()).toBe(200);
  // A new engine boots PGlite (about 4 s on this machine at rest, more under the whole suite).
  await expect
    .poll(async () => (await readyz()).status, { timeout: 45_000, intervals: [200], message: `the server's log: ${logged.slice(-1500)}` })
    .toBe(200);
  expect(logged).toMatch(/"msg":"store: the embedded engine stopped \(signal SIGKILL\); starting it again in 500 ms"/);
});

test.describe("connections per client", () => {
  const GUARDED = 3113;
  let guarded: ChildProcess;
  test.beforeAll(async ({ request }) => {
    test.setTimeout(120_000);
    guarded = startServer([path.resolve("web/serve.js")], {
      PORT: String(GUARDED),
      IDENT_CONNECT_TO: "::127.0.0.1:9",
      IDENT_METRICS_ADDR: "off",
      IDENT_MAX_CONNECTIONS_PER_CLIENT: "50",
    });
    await ready(request, GUARDED, guarded);
  });
  test.afterAll(() => {
    guarded?.kill("SIGTERM");
  });

  test("one address opening 400 silent connections keeps at most 50; the rest are closed at once, and another address is served meanwhile", async () => {
    const sockets: Socket[] = [];
    let closed = 0;
    try {
      await Promise.all(
        Array.from(
          { length: 400 },
          () =>
            new Promise<void>((resolve) => {
              const socket = connect({ host: "127.0.0.1", port: GUARDED, localAddress: "127.0.0.1" });
              sockets.push(socket);
              socket.on("error", () => undefined);
              socket.on("close", () => closed++);
              socket.once("connect", () => resolve());
              socket.once("close", () => resolve());
            }),
        ),
      );
      await expect.poll(() => closed, { timeout: 10_000 }).toBe(350);
      const other = await new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port: GUARDED, path: "/healthz", localAddress: "127.0.0.2", agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });
      expect(other).toBe(200);
      // The silent ones still open are the first client's 50; it gets none more.
      expect(sockets.filter((s) => !s.destroyed && s.readyState === "open")).toHaveLength(50);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });
});
