/**
 * Looking by itself (docs/notices.md#looking-by-itself), measured on the app as it runs: built, with
 * discovery and re-verification on, a followed entity re-checked every minute
 * (`IDENT_FOLLOW_RECHECK_S=60`, the shortest; documents fresh for 30 s). A webhook follows
 * alice.example; then the owner of blog.alice.example drops her, and nobody visits. The figure: how
 * long until the webhook hears of it (goal: the period and a minute, 120 s).
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BLOG_DROPS_ALICE, changeSite } from "../e2e/helpers/sample-control";
import { scratchDir } from "../test/helpers/scratch";
import type { Hooks, Received } from "../test/network/hooks";
import { spawnSampleNetwork } from "../test/network/spawn";

const PORT = 3190;
const PERIOD_S = 60;

export async function benchLooking(hooks: Hooks, hooksCa: string): Promise<void> {
  const net = await spawnSampleNetwork();
  const dir = scratchDir("ident-bench-looking-");
  const cas = path.join(dir, "cas.pem");
  writeFileSync(cas, `${readFileSync(net.env.NODE_EXTRA_CA_CERTS, "utf8").trim()}\n${hooksCa}`);
  const app = spawn(process.execPath, [path.resolve("web/serve.js")], {
    env: Object.assign({}, process.env, {
      PORT: String(PORT),
      IDENT_DATA_DIR: path.join(dir, "data"),
      IDENT_CRAWL: "1",
      IDENT_FOLLOW_RECHECK_S: String(PERIOD_S),
      IDENT_CACHE_FRESH_S: "30",
      IDENT_LOG_LEVEL: "warn",
      IDENT_CONNECT_TO: `${hooks.connectToText.replace(/^:/, "looking.hooks.test:")},${net.env.IDENT_CONNECT_TO}`,
      NODE_EXTRA_CA_CERTS: cas,
    }),
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://localhost:${PORT}`;
  try {
    for (let i = 0; i < 600; i++) {
      if (
        await fetch(`${base}/`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 200));
    }
    if ((await fetch(`${base}/api/resolve?q=alice.example`)).status !== 200) throw new Error("the app did not resolve alice.example");
    const made = await fetch(`${base}/api/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: "https://looking.hooks.test/alice", topic: "/entity/alice.example/feed.xml" }),
    });
    if (made.status !== 201) throw new Error(`the webhook was not made: ${made.status} ${await made.text()}`);
    if ((await changeSite(net, "blog.alice.example", BLOG_DROPS_ALICE)) !== 204) {
      throw new Error("the sample network did not take the change");
    }
    const broken = Date.now();
    const heard = (r: Received) => r.host === "looking.hooks.test" && r.method === "POST" && r.body.includes("blog.alice.example");
    const [got] = await hooks.waitFor(heard, 1, (PERIOD_S + 120) * 1000);
    const s = got ? ((got.at - broken) / 1000).toFixed(1) : "never, within 180";
    console.log(
      `notices looking: a proof broken at a followed entity's publisher, nobody visiting: delivered after ${s} s (period ${PERIOD_S} s; goal ≤ ${PERIOD_S + 60} s)`,
    );
  } finally {
    app.kill("SIGTERM");
    await new Promise((r) => app.once("exit", r));
    await net.stop();
  }
}
