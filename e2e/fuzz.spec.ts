/**
 * No path to a 500, no request left hanging, and no answer without the security headers: every route with hostile paths, methods, headers and
 * parameters, against the app bound to every address (0.0.0.0, as the browser tests run it, and
 * 127.0.0.1, as behind a reverse proxy, where a proxy rewrite once made Next proxy requests to
 * itself). Raw HTTP, so each path reaches the server exactly as written. The corpus is below.
 */
import type { ChildProcess } from "node:child_process";
import { request } from "node:http";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { ready, startServer } from "./helpers/server";

const LONG = "a".repeat(600);
const PATHS = [
  "/",
  "/search",
  "/search?q=",
  "/search?q=%20",
  "/search?q=%FF",
  "/search?q=%",
  "/search?q=%00",
  `/search?q=${LONG}`,
  "/search?q=%C2%A7",
  "/search?q=alice.example&refresh=%FF",
  "/search?q=a&q=b",
  "/search?q=@a@b.example/..%2F",
  "/entity/",
  "/entity/%FF",
  "/entity/%E0%A4%A",
  "/entity/%ED%A0%80.test",
  "/entity/%C0%AE.test",
  "/entity/%",
  "/entity/a/b",
  "/entity/..%2F..%2Fetc%2Fpasswd",
  "/entity/alice.example/%FF",
  "/entity/%2e%2e",
  `/entity/${LONG}.test`,
  "/entity/alice.example/badge.svg",
  "/entity/%FF/badge.svg",
  "/entity/%ED%A0%80.test/badge.svg",
  "/entity/..%2F..%2Fetc%2Fpasswd/badge.svg",
  `/entity/${LONG}.test/badge.svg`,
  "/api/resolve",
  "/api/resolve?q=%FF",
  "/api/resolve?q=%",
  `/api/resolve?q=${LONG}`,
  "/api/%FF",
  "/api/entity/%FF/history",
  "/api/entity/%/history",
  "/api/entity/%ED%A0%80.test/history",
  "/api/entity/a%20b/history",
  `/api/entity/${LONG}.test/history`,
  "/api/entity/alice.example/history?x=%FF",
  "/%",
  "/%FF",
  "//",
  "//evil.example/entity/alice.example",
  "/./",
  "/..",
  "/%2F%2F",
  "/_next/%FF",
  "/_next/static/%",
  "/_next/image?url=%FF",
  "/favicon.ico/%",
  "/_not-found",
  "/schemas/%FF.json",
  "/schemas/%",
  "/schemas/entity.json/%",
  "/search/",
  "/_next/static/nope.js",
  "/favicon.ico",
];
const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];
const HEADERS: Record<string, string>[] = [
  {},
  { rsc: "1" },
  { "next-router-state-tree": "%FF" },
  { "next-router-state-tree": "[[[" },
  { "next-action": "x" },
  { "x-ident-url": "%" },
  { "x-forwarded-for": "not an address" },
  { "accept-encoding": "*" },
];

/** An answer, and the security headers it lacks (docs/decisions.md#security-headers): every answer carries them. */
type Answer = { what: string; status: number | string; lacks?: string[] };
const SECURITY = ["content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy"];

function send(port: number, method: string, target: string, headers: Record<string, string>): Promise<Answer> {
  const what = `${method} ${target} ${JSON.stringify(headers)}`;
  return new Promise((resolve) => {
    const req = request(
      // A connection of its own: a kept-alive one may be closed by the server just as it is reused.
      {
        host: "127.0.0.1",
        port,
        method,
        path: target,
        headers: { ...headers, "content-type": "text/plain" },
        timeout: 15_000,
        agent: false,
      },
      (res) => {
        res.resume();
        const lacks = SECURITY.filter((name) => res.headers[name] === undefined);
        res.on("end", () =>
          resolve(lacks.length > 0 ? { what, status: res.statusCode ?? "none", lacks } : { what, status: res.statusCode ?? "none" }),
        );
      },
    );
    req.on("timeout", () => {
      req.destroy();
      resolve({ what, status: "no answer in 15 s" });
    });
    req.on("error", (e) => resolve({ what, status: e.message }));
    req.end(method === "GET" || method === "HEAD" ? undefined : "x=1");
  });
}

/** Every method, path and header set of the corpus, 8 at a time, plus `OPTIONS *`; the answers that are not below 500, or lack a security header. */
async function fuzz(port: number): Promise<Answer[]> {
  const jobs = PATHS.flatMap((p) => METHODS.flatMap((m) => HEADERS.map((h) => [m, p, h] as const)));
  jobs.push(["OPTIONS", "*", {}], ["GET", "http://evil.example/", {}]);
  const answers: Answer[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let job = jobs[next++]; job; job = jobs[next++]) answers.push(await send(port, ...job));
    }),
  );
  expect(answers).toHaveLength(jobs.length);
  return answers.filter((a) => typeof a.status !== "number" || a.status >= 500 || a.lacks !== undefined);
}

test.describe.configure({ timeout: 240_000 });

test("bound to 0.0.0.0: no 500 and no hanging request from the fuzz corpus", async () => {
  expect(await fuzz(3100)).toEqual([]);
});

test.describe("bound to 127.0.0.1", () => {
  let server: ChildProcess;
  test.beforeAll(async ({ request }) => {
    test.setTimeout(120_000);
    // Its publishers are unreachable (a closed loopback port): only the app's own answers are tried.
    // An index in memory: a folder of the project's own would be shared with other specs' servers.
    server = startServer([path.resolve("web/serve.js")], {
      PORT: "3101",
      HOSTNAME: "127.0.0.1",
      IDENT_CONNECT_TO: "::127.0.0.1:9",
      IDENT_FETCH_TIMEOUT_MS: "2000",
    });
    await ready(request, 3101, server, "127.0.0.1");
  });
  test.afterAll(() => {
    server.kill("SIGTERM");
  });
  test("no 500 and no hanging request from the fuzz corpus", async () => {
    expect(await fuzz(3101)).toEqual([]);
  });
});
