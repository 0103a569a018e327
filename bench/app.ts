/**
 * App figures for `npm run bench` (issue: web app benchmark):
 *   rps ratio  requests/s of a warm (cached) entity page ÷ requests/s of `/`, same run  goal ≥ 0.9
 *   TTFB       time to first byte of an entity page whose publishers answer in 50 ms (cold cache),
 *              with the time to the entity header and to the whole page beside it
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { request } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function waitFor(url: string, ms: number) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not come up`);
}

/** First byte, entity header and end of one GET, in ms. */
function timeGet(url: string, marker: string): Promise<{ first: number; header: number; end: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = NaN;
    let header = NaN;
    let text = "";
    request(url, (res) => {
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (Number.isNaN(first)) first = performance.now() - t0;
        text += chunk;
        if (Number.isNaN(header) && text.includes(marker)) header = performance.now() - t0;
      });
      res.on("end", () => resolve({ first, header, end: performance.now() - t0 }));
    })
      .on("error", reject)
      .end();
  });
}

async function rps(url: string, seconds: number): Promise<number> {
  const result = await autocannon({ url, connections: 8, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

/** Runs the built app on `env` (the sample network's), measures, and stops it. */
export async function benchApp(env: Record<string, string>, ttfbDomains: string[], bareDomain: string): Promise<void> {
  if (!existsSync(path.join(root, ".next", "BUILD_ID"))) {
    console.log("app       skipped: no build (run `npm run build` first)");
    return;
  }
  const port = "3210";
  const app = spawn(process.execPath, [path.join(root, "scripts", "serve.js")], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, ...env, PORT: port },
  });
  const base = `http://localhost:${port}`;
  try {
    await waitFor(`${base}/`, 60_000);
    // TTFB on a cold cache: each domain once.
    const runs = [];
    for (const domain of ttfbDomains) runs.push(await timeGet(`${base}/entity/${domain}`, 'data-testid="entity-header"'));
    console.log(
      `TTFB      ${median(runs.map((r) => r.first)).toFixed(0)} ms to first byte, ${median(runs.map((r) => r.header)).toFixed(0)} ms to the entity header, ` +
        `${median(runs.map((r) => r.end)).toFixed(0)} ms to the whole page (publishers answer in 50 ms; medians of ${runs.length} cold entities)`,
    );
    // Requests per second, warm: an entity page is cached after its first request. The 20-claim page
    // is the figure; the claimless one beside it shows how much of the gap is page weight.
    const entity = `${base}/entity/${ttfbDomains[0]}`;
    const bare = `${base}/entity/${bareDomain}`;
    for (const url of [entity, bare]) await timeGet(url, "");
    for (const url of [`${base}/`, entity, bare]) await rps(url, 2);
    const home = await rps(`${base}/`, 5);
    const page = await rps(entity, 5);
    const plain = await rps(bare, 5);
    console.log(
      `rps       ${(page / home).toFixed(2)} = warm entity page with 20 claims ${page.toFixed(0)} req/s ÷ / ${home.toFixed(0)} req/s (goal ≥ 0.9); ` +
        `${(plain / home).toFixed(2)} for an entity page with no claims`,
    );
  } finally {
    app.kill("SIGTERM");
  }
}
