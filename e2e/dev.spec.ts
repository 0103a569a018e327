/**
 * Development runs the production path (docs/architecture.md#one-request-one-decision): `npm run dev`
 * is web/serve.js with Next's development server inside it, so the page cache, shedding, the front
 * door and the read pages' rewrite all run while someone develops. Next writes its development build
 * to .next/dev, beside the production build the other specs use.
 */
import path from "node:path";
import { expect, test } from "@playwright/test";
import { spawnSampleNetwork, type SpawnedNetwork } from "../test/network/spawn";
import { ready, startServer } from "./helpers/server";

const PORT = 3130;
let net: SpawnedNetwork | undefined;
let server: ReturnType<typeof startServer> | undefined;

test.describe.configure({ mode: "serial", timeout: 180_000 });

test.beforeAll(async ({ request }) => {
  test.setTimeout(180_000);
  net = await spawnSampleNetwork();
  server = startServer([path.resolve("web/serve.js"), "--dev"], { PORT: String(PORT), IDENT_METRICS_ADDR: "off", ...net.env });
  await ready(request, PORT, server);
});
test.afterAll(async () => {
  server?.kill("SIGTERM");
  await net?.stop();
});

test("npm run dev: the same server as npm start, page cache, front door and script-free read pages included", async ({ request }) => {
  const base = `http://localhost:${PORT}`;
  const first = await request.get(`${base}/entity/alice.example`, { headers: { "user-agent": "curl/8" } });
  expect(first.status()).toBe(200);
  expect(await first.text()).toContain("Alice Moreau");
  // The first was cold: its documents were fetched while it rendered. The next, warm, is kept; the one after is a hit.
  await request.get(`${base}/entity/alice.example`, { headers: { "user-agent": "curl/8" } });
  const again = await request.get(`${base}/entity/alice.example?utm=1`, { headers: { "user-agent": "curl/8" } });
  expect(again.headers()["x-ident-page-cache"]).toBe("hit");
  // A read page ships without the framework's runtime, in development as in production.
  expect(await again.text()).not.toContain('src="/_next/');
  expect((await request.fetch(`${base}/`, { method: "TRACE" })).status()).toBe(405);
  const api = await request.get(`${base}/api/resolve?q=alice.example`);
  expect(api.status()).toBe(200);
  expect(api.headers()["ratelimit-policy"]).toBeTruthy();
});
