/**
 * Following an entity (docs/notices.md): the page says how, without script; a webhook made with the
 * API and a WebSub subscription made at the hub (its intent verified by the subscriber) each receive
 * the change a re-check records after a publisher breaks a claim, signed: the webhook verified by the
 * `standardwebhooks` package, WebSub's X-Hub-Signature by its HMAC. The callbacks are an HTTPS
 * subscriber on loopback (test/network/hooks.ts), reached as `hooks.test` through IDENT_CONNECT_TO.
 */
import type { ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { Webhook } from "standardwebhooks";
import { spawnSampleNetwork, type SpawnedNetwork } from "../test/network/spawn";
import { startHooks, type Hooks, type Received } from "../test/network/hooks";
import { scratchDir } from "../test/helpers/scratch";
import { BLOG_DROPS_ALICE, changeSite } from "./helpers/sample-control";
import { ready, startServer } from "./helpers/server";

const PORT = 3118;
test.use({ baseURL: `http://localhost:${PORT}`, javaScriptEnabled: false });
test.describe.configure({ mode: "serial", timeout: 120_000 });

let net: SpawnedNetwork;
let hooks: Hooks;
let server: ChildProcess;
test.beforeAll(async ({ request }) => {
  test.setTimeout(120_000);
  [net, hooks] = await Promise.all([spawnSampleNetwork(), startHooks()]);
  // Both CAs trusted; hooks.test sent to the subscriber, every other name to the sample network.
  const cas = path.join(scratchDir("ident-e2e-follow-"), "cas.pem");
  writeFileSync(cas, `${readFileSync(net.env.NODE_EXTRA_CA_CERTS, "utf8").trim()}\n${hooks.caPem}`);
  server = startServer([path.resolve("web/serve.js")], {
    PORT: String(PORT),
    IDENT_TRUSTED_HOPS: "1",
    IDENT_CONNECT_TO: `hooks.test:443:127.0.0.1:${hooks.port},${net.env.IDENT_CONNECT_TO}`,
    NODE_EXTRA_CA_CERTS: cas,
  });
  await ready(request, PORT, server);
});
test.afterAll(async () => {
  server?.kill("SIGTERM");
  await Promise.all([net?.stop(), hooks?.close()]);
});

const posted = (path: string) => (r: Received) => r.host === "hooks.test" && r.method === "POST" && r.path.startsWith(path);

test("the entity page says how to follow it: the feed, a webhook and WebSub, copyable by keyboard, without script", async ({ page }) => {
  await page.setExtraHTTPHeaders({ "x-forwarded-for": "198.51.100.20" });
  await page.goto("/entity/alice.example");
  await page.goto("/entity/alice.example");
  const follow = page.getByTestId("follow");
  await expect(follow.getByRole("heading", { name: "Follow" })).toBeVisible();
  await expect(follow.getByRole("link", { name: "Atom feed" })).toHaveAttribute("href", "/entity/alice.example/feed.xml");
  const webhook = follow.getByLabel("Webhook");
  await expect(webhook).toHaveValue(
    /^curl -X POST http:\/\/localhost:3118\/api\/webhooks .*"topic": "http:\/\/localhost:3118\/entity\/alice\.example\/feed\.xml"/,
  );
  await expect(follow.getByLabel("WebSub")).toHaveValue(/hub\.topic=http:\/\/localhost:3118\/entity\/alice\.example\/feed\.xml/);
  // A keyboard user reaches each snippet and selects it whole.
  await follow.getByLabel("Feed").focus();
  await page.keyboard.press("Tab");
  await expect(webhook).toBeFocused();
  await follow.scrollIntoViewIfNeeded();
  await follow.screenshot({ path: "test-results/screens/follow-1280.png" });
});

test("a broken claim, re-checked: the webhook and the WebSub callback each receive the change, signed", async ({ page, request }) => {
  const client = { "x-forwarded-for": "198.51.100.21" };
  const made = await request.post("/api/webhooks", {
    headers: client,
    data: { url: "https://hooks.test/webhook", topic: "/entity/alice.example/feed.xml" },
  });
  expect(made.status()).toBe(201);
  const hook = (await made.json()) as { id: string; secret: string };

  const hub = await request.post("/hub", {
    headers: client,
    form: {
      "hub.mode": "subscribe",
      "hub.topic": `http://localhost:${PORT}/entity/alice.example/feed.xml`,
      "hub.callback": "https://hooks.test/websub?who=reader",
      "hub.secret": "websub secret",
    },
  });
  expect(hub.status()).toBe(202);
  const [verification] = await hooks.waitFor((r) => r.method === "GET" && r.path.startsWith("/websub"), 1);
  expect(new URL(verification!.path, "https://x").searchParams.get("hub.mode")).toBe("subscribe");
  // The subscription starts once the subscriber has echoed the challenge.
  await new Promise((r) => setTimeout(r, 500));

  // The blog's owner drops Alice; the page's "Re-check now" records the change.
  expect(await changeSite(net, "blog.alice.example", BLOG_DROPS_ALICE)).toBe(204);
  await page.setExtraHTTPHeaders(client);
  await page.goto("/entity/alice.example");
  const started = Date.now();
  await page.getByTestId("recheck").first().focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/rechecked=/);

  const [viaWebhook] = await hooks.waitFor(posted("/webhook"), 1);
  const [viaWebsub] = await hooks.waitFor(posted("/websub"), 1);
  console.log(
    `follow: change → webhook ${viaWebhook!.at - started} ms, → WebSub ${viaWebsub!.at - started} ms (from the re-check's press)`,
  );
  const headers = Object.fromEntries(Object.entries(viaWebhook!.headers).map(([k, v]) => [k, String(v)]));
  expect(new Webhook(hook.secret).verify(viaWebhook!.body, headers)).toMatchObject({
    domain: "alice.example",
    kind: "properties",
    claim: "§:property:blog.alice.example",
    verified: false,
    reason: "not_listed",
  });
  expect(viaWebsub!.headers["x-hub-signature"]).toBe(
    `sha256=${createHmac("sha256", "websub secret").update(viaWebsub!.body).digest("hex")}`,
  );
  expect(viaWebsub!.body).toContain("is no longer verified");

  // The owner reads what was delivered with the secret.
  const seen = await request.get(`/api/webhooks/${hook.id}`, { headers: { authorization: `Bearer ${hook.secret}` } });
  expect(seen.status()).toBe(200);
  expect(changeSite(net, "blog.alice.example", null)).resolves.toBe(204);
});

test("the feed names its hub, in the Atom and in a Link header", async ({ request }) => {
  const feed = await request.get("/entity/alice.example/feed.xml");
  expect(feed.headers().link).toBe(
    `<http://localhost:${PORT}/hub>; rel="hub", <http://localhost:${PORT}/entity/alice.example/feed.xml>; rel="self"`,
  );
  expect(await feed.text()).toContain(`<link rel="hub" href="http://localhost:${PORT}/hub"/>`);
});
