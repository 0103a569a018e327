/**
 * App figures for `npm run bench`:
 *   rps ratio  requests/s of a warm (cached) entity page ÷ requests/s of `/`, same run  goal ≥ 0.9
 *              for a 20-claim page as a browser and as a crawler; also a typical entity (7 claims)
 *              and a claimless one, with the server's CPU time per request beside each (steadier
 *              than req/s on a shared machine). Warm entity pages come from the page cache
 *              (web/page-cache.ts); `/` is rendered each time
 *   TTFB       time to first byte of an entity page whose publishers answer in 50 ms (cold cache),
 *              with the time to the entity header and to the whole page beside it, as a browser
 *              sees it (streamed); a program gets the page whole (web/clients.ts)
 *   Chromium   cold entity pages opened in Debian's Chromium. The headline: the ideal server-rendered
 *              page (bench/ideal-page.ts) given the app's own shell (what the app sends a cold page
 *              before its entity document is in, captured at the start of the run: captureShell),
 *              opened in turn with the app's in the same browser, when the entity header is visible
 *              (no claims, 20 claims) and when all 20 claims are in place, the app's ÷ that page's
 *              (goal ≤ 1.2 × each): what the app's server adds. Beside it the plain ideal page's
 *              ratios (its few lines of head): what the design adds as well. Then: when the entity header is
 *              visible (no claims, 20 claims) ÷ a bare client's fetch of the entity document (goal ≤ 1.3 ×), and
 *              when all 20 claims are in place ÷ a bare client's entity then 20 documents at once
 *              (goal ≤ 1.2 ×); with the claims on their own addresses and on one (bench/bare-client.ts);
 *              beside them each server's CPU time a cold page, the app's (its index engine's included) and the ideal page's;
 *              beside them the browser's floor: the same pages warm, nothing fetched; and the same
 *              browser's own fetches: it opens the entity document itself (text on screen), and from
 *              there fetches the 20 claim documents at once, what no page could do faster in it.
 *              Every server first answers cold pages of its own, not timed (warmUp): it is measured
 *              as it runs, past what a process just started compiles.
 *              With BENCH_BASE=dir (another checkout, built), that build of the app is opened in turn
 *              as well, on cold entities of its own: this build's times ÷ that one's, measured in the
 *              same run, which the machine's drift between runs cannot blur; and its warm 20-claim
 *              page, `/`, /api/resolve and badge are measured in turn with this build's (goal ≥ 0.95 ×)
 *   HTTP       the cold no-claim page's header over HTTP as a browser asks (gzip), no browser running,
 *              the app's ÷ the plain ideal page's, in turn: at rest, and beside two busy loops that
 *              share the cores as Chromium does while it takes a page (coldBesideBusyLoops): what the
 *              app's server work costs a page on a machine it shares
 *   API        requests/s of the warm /api/resolve and /api/search for the same entity, and of a 304 to
 *              If-None-Match, ÷ the warm 20-claim page's (goals ≥ 0.9, ≥ 0.5, ≥ 1.0)
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createGunzip } from "node:zlib";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "@playwright/test";
import autocannon from "autocannon";
import { matchConnectTo, parseConnectTo } from "ident-resolver/node";
import { median, spread } from "./stats";
import { SERVER_NODE_FLAGS } from "../scripts/server-flags.js";
import { endsWithRun, scratchDir } from "../test/helpers/scratch";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** A person's browser: it gets streamed pages when they are cold (web/clients.ts). */
const BROWSER = { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36" };
/** A crawler: it always gets whole pages, the JSON-LD in the head. */
const CRAWLER = { "user-agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" };

/**
 * CPU time a process and its children still running have used, in ms, from /proc (Linux); NaN
 * elsewhere. The app's children count: the embedded index's engine is a process of its own
 * (lib/store/db.ts), and a cold page's check costs it as much CPU as the page's own thread.
 */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    const own = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    const children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean).map(Number),
    );
    return children.reduce((sum, child) => sum + (cpuMs(child) || 0), own);
  } catch {
    return NaN;
  }
}

/**
 * Waits until the processes of `pids` (their children counted) have used no CPU for 60 ms, 2 s at
 * most: what a server does after its page is whole (its record, its stream's end) done before the
 * next page is timed.
 */
async function quiet(pids: (number | undefined)[]): Promise<void> {
  const used = () => pids.reduce((sum: number, pid) => sum + (pid === undefined ? 0 : cpuMs(pid) || 0), 0);
  const deadline = Date.now() + 2_000;
  let last = used();
  let still = 0;
  while (still < 3 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    const now = used();
    still = now === last ? still + 1 : 0;
    last = now;
  }
}

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

/** First byte, entity header and end of one GET, in ms (read through gunzip when the answer is gzipped). */
function timeGet(
  url: string,
  marker: string,
  headers: Record<string, string> = BROWSER,
): Promise<{ first: number; header: number; end: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = NaN;
    let header = NaN;
    let text = "";
    request(url, { headers }, (res) => {
      res.once("data", () => (first = performance.now() - t0));
      const body = res.headers["content-encoding"] === "gzip" ? res.pipe(createGunzip()) : res;
      body.setEncoding("utf8");
      body.on("data", (chunk: string) => {
        text += chunk;
        if (Number.isNaN(header) && text.includes(marker)) header = performance.now() - t0;
      });
      body.on("end", () => resolve({ first, header, end: performance.now() - t0 }));
    })
      .on("error", reject)
      .end();
  });
}

/**
 * The cold no-claim page's header over HTTP (as a browser asks, gzip, no browser running), the app's
 * at `base` and the plain ideal page's at `ideal` in turn, first at rest and then beside two busy
 * loops on the machine's cores (each stops by itself within two minutes, and is stopped when done).
 * The app's domains are each opened once (cold); the ideal page keeps nothing, so it is given the same.
 */
async function coldBesideBusyLoops(base: string, ideal: string, domains: readonly string[]): Promise<string> {
  const headers = Object.assign({}, BROWSER, { "accept-encoding": "gzip, deflate, br" });
  const marker = 'data-testid="entity-header"';
  const half = Math.floor(domains.length / 2);
  const measure = async (part: readonly string[]) => {
    const own: number[] = [];
    const best: number[] = [];
    for (const [i, domain] of part.entries()) {
      const pair = await inPairs(
        i,
        () => timeGet(`${base}/entity/${domain}`, marker, headers),
        () => timeGet(`${ideal}/entity/${domain}`, marker, headers),
      );
      own.push(pair[0].header);
      best.push(pair[1].header);
    }
    return `app ${msSpread(own)}, ideal ${msSpread(best)}: ${(median(own) / median(best)).toFixed(2)} ×`;
  };
  const rest = await measure(domains.slice(0, half));
  const loop = "const end = Date.now() + 120000; let x = 0; while (Date.now() < end) for (let i = 0; i < 1e6; i++) x += i;";
  const loops = [0, 1].map(() => spawn(process.execPath, ["-e", loop], { stdio: "ignore" }));
  try {
    const busy = await measure(domains.slice(half));
    return (
      `HTTP      the cold no-claim page's header over HTTP as a browser asks (gzip), no browser running, the app's ÷ the plain ideal page's, in turn, ` +
      `medians (min–max) of ${half}: at rest ${rest}; beside two busy loops sharing the cores as Chromium does: ${busy}`
    );
  } finally {
    for (const child of loops) child.kill("SIGKILL");
  }
}

/** A program calling the API. */
const PROGRAM = { "user-agent": "curl/8.5.0", accept: "application/json" };

/** The ETag `url` answers with now. */
function etagOf(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, { headers: PROGRAM }, (res) => {
      res.resume();
      const etag = res.headers.etag;
      if (typeof etag === "string") resolve(etag);
      else reject(new Error(`${url}: no ETag (status ${res.statusCode})`));
    })
      .on("error", reject)
      .end();
  });
}

/**
 * Requests per second of `url` over `seconds`, and the server's CPU ms per request meanwhile. With
 * `fresh`, each request adds its own value of a parameter the entity page reads (`rechecked`, which
 * shows nothing when it is not a time), so the page cache never answers it: the page cache keys a
 * page by the parameters it reads (docs/decisions.md#page-cache), and ignores any other.
 */
async function rps(
  url: string,
  seconds: number,
  pid?: number,
  fresh = false,
  client: Record<string, string> = BROWSER,
): Promise<{ rps: number; cpu: number }> {
  const before = cpuMs(pid);
  let n = 0;
  const path = new URL(url).pathname;
  const result = await autocannon({
    url,
    connections: 8,
    duration: seconds,
    // As a browser asks: compressed, so every page pays for gzip.
    headers: { ...client, "accept-encoding": "gzip, deflate, br" },
    ...(fresh ? { requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, path: `${path}?rechecked=bench${n++}` }) }] } : {}),
  });
  // A conditional request is answered 304, which is what it is measured for.
  const expected = client["if-none-match"] ? result["3xx"] : 0;
  if (result.non2xx - expected > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, cpu: (cpuMs(pid) - before) / result.requests.total };
}

/**
 * The cold pages each server answers before Chromium opens any (`warmUp`), so that it is measured as
 * it runs, not in its first minute: a server just started compiles its code as it meets it. Over
 * HTTP, no browser (docs/decisions.md#cold-pages): the app's CPU a cold no-claim page fell from
 * 41 ms (its first 50 pages) to 25–27 (past 125), its index engine's from 34 to 13–15 (PostgreSQL's
 * WebAssembly compiled again, hot function by hot function, by V8's helper threads).
 */
export type WarmSet = { zero: readonly string[]; twenty: readonly string[] };

/**
 * Takes the server at `base` through every page of `warm` once, as a browser asks (gzip), two at a
 * time, a 20-claim page among the no-claim ones: each is cold there (each server keeps its own cache;
 * the ideal page keeps none).
 */
async function warmUp(base: string, warm: WarmSet): Promise<void> {
  const every = Math.max(1, Math.floor(warm.zero.length / Math.max(1, warm.twenty.length)));
  const order = warm.zero.flatMap((d, i) => {
    const twenty = i % every === 0 ? warm.twenty[i / every] : undefined;
    return twenty ? [d, twenty] : [d];
  });
  const gzip = { ...BROWSER, "accept-encoding": "gzip" };
  const header = 'data-testid="entity-header"';
  for (let i = 0; i < order.length; i += 2)
    await Promise.all(
      order.slice(i, i + 2).map(async (d) => {
        // A page refused (a limit met) would warm nothing, and leave the figures to look right.
        if (Number.isNaN((await timeGet(`${base}/entity/${d}`, header, gzip)).header))
          throw new Error(`warmUp: ${base}/entity/${d} came without its header`);
      }),
    );
}

/** Cold entities to open in Chromium, and what a bare client takes for the same shapes. */
export type ColdSet = {
  floor: { fanMs: number; entityMs: number };
  twenty: string[];
  zero: string[];
  /** The same shapes for the ideal page (bench/ideal-page.ts): entities of their own, so each page is cold. */
  ideal: { twenty: string[]; zero: string[] };
  /** And for the ideal page given the app's own shell (bench/ideal-page.ts, BENCH_SHELL). */
  shell: { twenty: string[]; zero: string[] };
  /** And for the build at BENCH_BASE, when there is one. */
  baseline: { twenty: string[]; zero: string[] };
  /** The claim documents' URLs of each of `twenty`, in the same order. */
  claimsOf: (domain: string) => string[];
  /** The pages each server answers before any is timed (`warmUp`). */
  warm: WarmSet;
};

/**
 * Timed in the page, from navigation start (performance.now()): when the entity header is first
 * visible, and when `claims` claim cards are visible with none pending (and how many of them are
 * verified then). It hands its figures to the bench through the binding `__identDone` once the page
 * is whole: nothing of the harness runs in the page while it loads (see `whenDone`).
 */
const PAGE_TIMER = (claims: number) => `
  window.__ident = {};
  new MutationObserver(() => {
    const t = performance.now();
    const header = document.querySelector('[data-testid="entity-header"]');
    if (header) window.__ident.arrived ??= t;
    if (!header || !header.checkVisibility()) return;
    window.__ident.header ??= t;
    const shown = [...document.querySelectorAll('[data-testid="claim"]')].filter((c) => c.checkVisibility()).length;
    if (shown < ${claims} || document.querySelector('[data-testid="claim-pending"]') || window.__ident.whole !== undefined) return;
    window.__ident.whole = t;
    window.__ident.verified = document.querySelectorAll('[data-testid="claim"][data-verified="true"]').length;
    window.__identDone(window.__ident);
  }).observe(document, { subtree: true, childList: true, attributes: true });`;

/**
 * Readies `page` to hand its figures to the bench: the returned function waits for the page's own
 * call of `__identDone` (its timer's, once the page is whole), 30 s at most. The page calls out
 * rather than being polled: Playwright's `waitForFunction` first loads its own injected script into
 * the page, 10–17 ms of the page's thread in a trace, and did so while the page loaded, in the window
 * in which the header arrives. That held the app's page back more than the ideal one (its shell's
 * first layout waited behind it): in a replay of both pages' bytes with the servers' timings, the
 * app's header came at 1.25 × the ideal page's with it and at 1.08 × without
 * (docs/decisions.md#cold-pages).
 */
async function whenDone<T>(page: Page): Promise<() => Promise<T>> {
  let done: (value: T) => void = () => {};
  const result = new Promise<T>((resolve) => (done = resolve));
  await page.exposeBinding("__identDone", (_source, value: T) => done(value));
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("not whole within 30 s")), 30_000);
    });
    try {
      return await Promise.race([result, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * Debian's Chromium, without Playwright's own handlers of SIGINT, SIGTERM and SIGHUP: with them, a
 * bench sent SIGTERM closed its browser and went on, waited 30 s for a page and failed with "not
 * whole within 30 s". The signal ends the bench (test/helpers/scratch.ts), whose exit listeners,
 * Playwright's among them, end the browser: after a SIGTERM nothing of it was left running.
 */
const LAUNCH = {
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  handleSIGINT: false,
  handleSIGTERM: false,
  handleSIGHUP: false,
};

/** As the tests launch Debian's Chromium (playwright.config.ts). */
const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"];

/**
 * Opens `base/entity/{domain}` in a fresh context (cold the first time); its header and whole times,
 * in ms. Throws unless its `claims` claims are all verified.
 */
async function openCold(
  browser: Browser,
  base: string,
  domain: string,
  claims: number,
): Promise<{ header: number; whole: number; arrived: number }> {
  // A person's browser: headless Chromium says "HeadlessChrome", which gets whole pages (web/clients.ts).
  const context = await browser.newContext({ userAgent: BROWSER["user-agent"] });
  try {
    const page = await context.newPage();
    type Figures = { header: number; whole: number; arrived: number; verified: number };
    const done = await whenDone<Figures>(page);
    await page.addInitScript(PAGE_TIMER(claims));
    // BENCH_TRACE=1: what reached the browser's network layer and when (ms after the page was asked
    // for), printed beside the page's own times: where a late header is lost.
    const trace: string[] = [];
    if (process.env.BENCH_TRACE) {
      const cdp = await context.newCDPSession(page);
      await cdp.send("Network.enable");
      let t0 = NaN;
      let doc = "";
      const at = (t: number) => ((t - t0) * 1000).toFixed(0);
      cdp.on("Network.requestWillBeSent", (e) => {
        if (Number.isNaN(t0)) [t0, doc] = [e.timestamp, e.requestId];
        trace.push(`${at(e.timestamp)} ask ${new URL(e.request.url).pathname.slice(0, 40)}`);
      });
      cdp.on("Network.responseReceived", (e) => e.requestId === doc && trace.push(`${at(e.timestamp)} head`));
      cdp.on("Network.dataReceived", (e) => e.requestId === doc && trace.push(`${at(e.timestamp)} +${e.dataLength}`));
      cdp.on("Network.loadingFinished", (e) => trace.push(`${at(e.timestamp)} done${e.requestId === doc ? " (page)" : ""}`));
    }
    // BENCH_CHROME_TRACE=dir: a Chromium performance trace of each cold page in dir (open it in the
    // DevTools Performance panel): what the page's own thread did while it waited (docs/decisions.md#cold-pages).
    const traceDir = process.env.BENCH_CHROME_TRACE;
    // A page opened again (the warm floor) gets a file of its own.
    const traceName = `${new URL(base).port}-${domain}`;
    if (traceDir)
      await browser.startTracing(page, {
        path: path.join(traceDir, existsSync(path.join(traceDir, `${traceName}.json`)) ? `${traceName}-again.json` : `${traceName}.json`),
        categories: [
          "devtools.timeline",
          "disabled-by-default-devtools.timeline",
          "blink",
          "loading",
          "toplevel",
          "v8",
          "fonts",
          "disabled-by-default-fonts",
        ],
      });
    await page.goto(`${base}/entity/${domain}`, { waitUntil: "commit" });
    const r = await done().catch(async (error: unknown) => {
      // A page that never shows its claims says why: its words, not only a timeout.
      const shown = await page.evaluate(() => document.body?.innerText.replace(/\s+/g, " ").slice(0, 400) ?? "").catch(() => "");
      throw new Error(`${base}/entity/${domain}: not whole within 30 s; it shows: ${JSON.stringify(shown)}`, { cause: error });
    });
    if (traceDir) await browser.stopTracing();
    if (process.env.BENCH_TRACE)
      console.error(
        `trace ${base} ${domain}: arrived ${r.arrived.toFixed(0)}, header ${r.header.toFixed(0)}, whole ${r.whole.toFixed(0)}; ${trace.join(", ")}`,
      );
    if (r.verified !== claims) throw new Error(`${base}/entity/${domain}: ${r.verified} of ${claims} claims verified`);
    return r;
  } finally {
    await context.close();
  }
}

/** Each of `runs` in turn, starting at the `i`th, so that none always comes first. */
async function inTurn(i: number, ...runs: (() => Promise<void>)[]) {
  for (let k = 0; k < runs.length; k++) await runs[(i + k) % runs.length]?.();
}

/** Two measures, the first first in even rounds and second in odd ones; their results in the order given. */
async function inPairs<T>(i: number, a: () => Promise<T>, b: () => Promise<T>): Promise<[T, T]> {
  if (i % 2 === 0) {
    const first = await a();
    return [first, await b()];
  }
  const second = await b();
  return [await a(), second];
}

/** A median in ms with its samples' spread: `118 ms (101–140)`. */
function msSpread(xs: readonly number[]): string {
  const { min, max } = spread(xs);
  return `${median(xs).toFixed(0)} ms (${min.toFixed(0)}–${max.toFixed(0)})`;
}

/**
 * The browser's own fetches, timed in the page from navigation start: when the entity document it
 * opened is on screen as text, and when the claim documents it then asked for at once (`no-cors`:
 * each answered in full, read by no one) are all in. The page starts them the moment the text is
 * there, so no round trip to the test adds to it.
 */
const DOCUMENT_TIMER = (claims: readonly string[]) => `
  window.__ident = {};
  new MutationObserver(() => {
    if (window.__ident.text !== undefined || !document.body || !document.body.textContent.includes('"network_id"')) return;
    window.__ident.text = performance.now();
    Promise.all(${JSON.stringify(claims)}.map((u) => fetch(u, { mode: "no-cors", cache: "no-store" }).then((r) => r.arrayBuffer())))
      .then(() => { window.__ident.whole = performance.now(); window.__identDone(window.__ident); });
  }).observe(document, { subtree: true, childList: true, characterData: true });`;

/** Chromium sending the names of `domains` where `connectTo` sends them, and the publishers' test CA accepted. */
async function launchOnNetwork(connectTo: string, domains: readonly string[]): Promise<Browser> {
  const parsed = parseConnectTo(connectTo);
  if (!parsed.ok) throw new Error(parsed.message);
  const rules = domains.map((d) => {
    const to = matchConnectTo(parsed.entries, d, 443);
    if (!to?.host) throw new Error(`${d}: no connect-to address`);
    return `MAP ${d} ${to.host.includes(":") ? `[${to.host}]` : to.host}:${to.port}`;
  });
  return chromium.launch({
    ...LAUNCH,
    args: [...CHROMIUM_ARGS, `--host-resolver-rules=${rules.join(",")}`],
  });
}

/** Opens `https://{domain}/ident.json` in a fresh context, then fetches `claims`; when each was done, in ms. */
async function openDocument(browser: Browser, domain: string, claims: readonly string[]): Promise<{ text: number; whole: number }> {
  // The publishers' certificates are from the CA the sample network made; the check is still made.
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  try {
    const page = await context.newPage();
    const done = await whenDone<{ text: number; whole: number }>(page);
    await page.addInitScript(DOCUMENT_TIMER(claims));
    await page.goto(`https://${domain}/ident.json`, { waitUntil: "commit" });
    return await done();
  } finally {
    await context.close();
  }
}

/**
 * The medians of `set`'s cold pages in Chromium, beside the ideal page's (served at `ideal`) and the
 * bare client's figures; and beside another build's (served at `baseline`), when given.
 */
async function coldInChromium(
  base: string,
  ideals: { plain: string; shell: string },
  pids: { app: number | undefined; ideal: number | undefined; others: (number | undefined)[] },
  set: ColdSet,
  connectTo: string,
  label: string,
  baseline: string | null,
): Promise<string> {
  const browser = await chromium.launch({ ...LAUNCH, args: CHROMIUM_ARGS });
  const own = await launchOnNetwork(connectTo, [
    "empty.bench",
    ...set.zero,
    ...set.twenty.flatMap((d) => [d, ...set.claimsOf(d).map((u) => new URL(u).hostname)]),
  ]);
  try {
    // Every server past its start (`warmUp`), then the browser, not timed.
    for (const server of [base, ideals.plain, ideals.shell, ...(baseline ? [baseline] : [])]) await warmUp(server, set.warm);
    const ideal = ideals.plain;
    await openCold(browser, base, "empty.bench", 0);
    await openCold(browser, ideal, "empty.bench", 0);
    await openCold(browser, ideals.shell, "empty.bench", 0);
    if (baseline) await openCold(browser, baseline, "empty.bench", 0);
    await openDocument(own, "empty.bench", []);
    const zero: { header: number; arrived: number }[] = [];
    const twenty: { header: number; whole: number; arrived: number }[] = [];
    const documents: { text: number }[] = [];
    const fans: { whole: number }[] = [];
    const idealZero: { header: number }[] = [];
    const idealTwenty: { header: number; whole: number }[] = [];
    const shellZero: { header: number }[] = [];
    const shellTwenty: { header: number; whole: number }[] = [];
    const baseZero: { header: number }[] = [];
    const baseTwenty: { header: number; whole: number }[] = [];
    // The servers' CPU time over the cold pages (each serves only its own, and what they ask for: the
    // app's badge and icon): what a page costs the machine the browser shares
    // (docs/decisions.md#cold-pages).
    const cpuBefore = { app: cpuMs(pids.app), ideal: cpuMs(pids.ideal) };
    // Alternated, so that drift on a shared machine falls on all alike; the app's page, the ideal
    // one (and the other build's) each first in turn.
    // Each page's server done with it (its record, its stream's end) before the next page is asked
    // for: a server's work after its page is whole would fall on another server's page.
    const servers = [pids.app, pids.ideal, ...pids.others];
    const settled = (run: () => Promise<void>) => async () => {
      await run();
      await quiet(servers);
    };
    for (let i = 0; i < set.twenty.length; i++) {
      const [z, c] = [set.zero[i] ?? "", set.twenty[i] ?? ""];
      const [iz, ic] = [set.ideal.zero[i] ?? "", set.ideal.twenty[i] ?? ""];
      const [sz, sc] = [set.shell.zero[i] ?? "", set.shell.twenty[i] ?? ""];
      const [bz, bc] = [set.baseline.zero[i] ?? "", set.baseline.twenty[i] ?? ""];
      const other = (run: () => Promise<void>) => (baseline ? [run] : []);
      await inTurn(
        i,
        settled(async () => void zero.push(await openCold(browser, base, z, 0))),
        settled(async () => void idealZero.push(await openCold(browser, ideal, iz, 0))),
        settled(async () => void shellZero.push(await openCold(browser, ideals.shell, sz, 0))),
        ...other(settled(async () => void baseZero.push(await openCold(browser, baseline ?? "", bz, 0)))),
      );
      documents.push(await openDocument(own, z, []));
      await inTurn(
        i,
        settled(async () => void twenty.push(await openCold(browser, base, c, 20))),
        settled(async () => void idealTwenty.push(await openCold(browser, ideal, ic, 20))),
        settled(async () => void shellTwenty.push(await openCold(browser, ideals.shell, sc, 20))),
        ...other(settled(async () => void baseTwenty.push(await openCold(browser, baseline ?? "", bc, 20)))),
      );
      fans.push(await openDocument(own, c, set.claimsOf(c)));
    }
    const cpuPerPage = (pid: number | undefined, before: number) => (cpuMs(pid) - before) / (set.zero.length + set.twenty.length);
    const cpu = { app: cpuPerPage(pids.app, cpuBefore.app), ideal: cpuPerPage(pids.ideal, cpuBefore.ideal) };
    // The browser's own floor on this machine: the same pages again, warm (answered whole from the
    // page cache, nothing fetched), opened the same way.
    const warm: { header: number }[] = [];
    for (const domain of set.zero) warm.push(await openCold(browser, base, domain, 0));
    const floor = median(warm.map((r) => r.header));
    const h0 = median(zero.map((r) => r.header));
    const h20 = median(twenty.map((r) => r.header));
    const w20 = median(twenty.map((r) => r.whole));
    const { entityMs, fanMs } = set.floor;
    const [doc, fan] = [median(documents.map((r) => r.text)), median(fans.map((r) => r.whole))];
    const ratio = <K extends string>(app: Record<K, number>[], other: Record<K, number>[], key: K) =>
      `${(median(app.map((r) => r[key])) / median(other.map((r) => r[key]))).toFixed(2)} × (${msSpread(other.map((r) => r[key]))} there)`;
    const vs = (app: number[], best: number[]) =>
      `app ${msSpread(app)}, ideal ${msSpread(best)}: ${(median(app) / median(best)).toFixed(2)} ×`;
    const header20 = vs(
      twenty.map((r) => r.header),
      idealTwenty.map((r) => r.header),
    );
    const header0 = vs(
      zero.map((r) => r.header),
      idealZero.map((r) => r.header),
    );
    const whole20 = vs(
      twenty.map((r) => r.whole),
      idealTwenty.map((r) => r.whole),
    );
    const given = (app: number[], shell: number[]) =>
      `app ${msSpread(app)}, ideal with the app's shell ${msSpread(shell)}: ${(median(app) / median(shell)).toFixed(2)} ×`;
    const headline =
      `Chromium  cold entity pages ÷ the ideal page given the app's own shell (bench/ideal-page.ts, BENCH_SHELL: what the server adds), ${label} (goal ≤ 1.2 × each):\n` +
      `          header visible, 20 claims: ${given(
        twenty.map((r) => r.header),
        shellTwenty.map((r) => r.header),
      )}; no claims: ${given(
        zero.map((r) => r.header),
        shellZero.map((r) => r.header),
      )}\n` +
      `          all 20 claims in place: ${given(
        twenty.map((r) => r.whole),
        shellTwenty.map((r) => r.whole),
      )}\n` +
      `          ÷ the plain ideal page (its 364-byte head: what the design adds as well): header visible, 20 claims: ${header20}; no claims: ${header0}\n` +
      `          all 20 claims in place: ${whole20}\n` +
      `          medians (min–max) of ${set.twenty.length} cold pages each, the app's and the ideal's opened in turn, publishers answering in 50 ms, ` +
      `each server first taken through ${set.warm.zero.length + set.warm.twenty.length} cold pages of its own (${set.warm.twenty.length} with 20 claims), each page timed once every server was quiet\n` +
      `          the servers' CPU time a cold page (no claims and 20, their mean; the app's index engine included): app ${cpu.app.toFixed(0)} ms, ideal ${cpu.ideal.toFixed(0)} ms (${(cpu.app / cpu.ideal).toFixed(2)} ×)\n` +
      (baseline
        ? `          this build ÷ the build at BENCH_BASE (${process.env.BENCH_BASE}), opened in turn with them: ` +
          `header, 20 claims ${ratio(twenty, baseTwenty, "header")}; no claims ${ratio(zero, baseZero, "header")}; ` +
          `all 20 claims in place ${ratio(twenty, baseTwenty, "whole")}\n`
        : "");
    return (
      headline +
      `Chromium  cold entity pages, ${label}: header visible at ${h0.toFixed(0)} ms with no claims (${(h0 / entityMs).toFixed(2)} ×) and ` +
      `${h20.toFixed(0)} ms with 20 (${(h20 / entityMs).toFixed(2)} ×) vs a bare fetch of the entity document ${entityMs.toFixed(0)} ms (goal ≤ 1.3 ×); ` +
      `all 20 claims in place at ${w20.toFixed(0)} ms vs a bare client's entity then 20 documents ${fanMs.toFixed(0)} ms (${(w20 / fanMs).toFixed(2)} ×, goal ≤ 1.2 ×); ` +
      `medians of ${set.twenty.length}, publishers answering in 50 ms; the header's markup was in the page at ${median(zero.map((r) => r.arrived)).toFixed(0)} and ${median(twenty.map((r) => r.arrived)).toFixed(0)} ms; ` +
      `the browser's floor: the same no-claim pages warm (nothing fetched) show their header at ${floor.toFixed(0)} ms (${(floor / entityMs).toFixed(2)} ×); ` +
      `the browser itself: the entity document opened shows as text at ${doc.toFixed(0)} ms (headers ${(h0 / doc).toFixed(2)} × and ${(h20 / doc).toFixed(2)} × that), ` +
      `then its 20 claim documents fetched at once are in at ${fan.toFixed(0)} ms (the claims in place ${(w20 / fan).toFixed(2)} × that)`
    );
  } finally {
    await Promise.all([browser.close(), own.close()]);
  }
}

/** `npm start` on `port` with `env` over a fresh embedded index and no discovery. */
function startServer(env: Record<string, string>, port: string, dir = root) {
  const server = spawn(process.execPath, [...SERVER_NODE_FLAGS, path.join(dir, "web", "serve.js")], {
    cwd: dir,
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      ...process.env,
      IDENT_LOG_LEVEL: "warn",
      IDENT_DATA_DIR: path.join(scratchDir("ident-bench-"), "data"),
      IDENT_CRAWL: "0",
      // The figures are of the server, not of one client's limit: the bench is one client, and its
      // searches and cold pages a minute (about 40 with BENCH_PAGES=10) are put out of reach.
      IDENT_SEARCHES_PER_MIN: "1000000",
      IDENT_STORE_READS_PER_MIN: "1000000",
      IDENT_COLD_LOOKUPS_PER_MIN: "1000000",
      // And the bench's share of one address: the set with every claim on one address (and each
      // server's warm-up before it, warmUp) asks it for over a thousand documents in a minute.
      IDENT_ADDRESS_BUDGET_PER_MIN: "1000000",
      ...env,
      PORT: port,
    },
  });
  return endsWithRun(server);
}

/**
 * The app's shell (docs/decisions.md#cold-pages): the bytes the app at `base` sends a browser for a
 * cold entity page before its entity document is in (`shell.bench`, whose document comes 200 ms
 * late: what arrives before the first pause of 100 ms), written to a file for the ideal page given it.
 */
async function captureShell(base: string): Promise<string> {
  const chunks = await new Promise<{ at: number; bytes: Buffer }[]>((resolve, reject) => {
    const got: { at: number; bytes: Buffer }[] = [];
    request(`${base}/entity/shell.bench`, { headers: BROWSER }, (res) => {
      res.on("data", (bytes: Buffer) => got.push({ at: performance.now(), bytes }));
      res.on("end", () => resolve(got));
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
  const pause = chunks.findIndex((c, i) => i > 0 && c.at - (chunks[i - 1]?.at ?? c.at) >= 100);
  const shell = Buffer.concat(chunks.slice(0, pause < 0 ? chunks.length : pause).map((c) => c.bytes)).toString("utf8");
  if (pause < 0 || shell.includes('data-testid="entity-header"'))
    throw new Error("captureShell: the app's cold page came with no pause before its header (is shell.bench's document late?)");
  const file = path.join(scratchDir("ident-bench-shell-"), "shell.html");
  writeFileSync(file, shell);
  return file;
}

/** Runs the ideal page (bench/ideal-page.ts) on `port` with `env`, as the app is run, while `measure` runs. */
async function withIdealPage<T>(
  env: Record<string, string>,
  port: string,
  measure: (base: string, pid: number | undefined) => Promise<T>,
): Promise<T> {
  const ideal = endsWithRun(
    spawn(process.execPath, ["--import", "tsx", path.join(root, "bench", "ideal-page.ts")], {
      cwd: root,
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, ...env, PORT: port },
    }),
  );
  try {
    await waitFor(`http://localhost:${port}/`, 30_000);
    return await measure(`http://localhost:${port}`, ideal.pid);
  } finally {
    ideal.kill("SIGTERM");
  }
}

/**
 * The build at BENCH_BASE, started on `port` beside the app as the app is (its metrics off: the
 * app's hold their address), once it answers; null without BENCH_BASE. The caller stops it.
 */
async function startBaseline(env: Record<string, string>, port: string) {
  if (!process.env.BENCH_BASE) return null;
  const dir = path.resolve(process.env.BENCH_BASE);
  if (!existsSync(path.join(dir, ".next", "BUILD_ID"))) throw new Error(`BENCH_BASE=${dir}: no build there (npm run build in it)`);
  const server = startServer(Object.assign({}, env, { IDENT_METRICS_ADDR: "off" }), port, dir);
  try {
    await waitFor(`http://localhost:${port}/`, 60_000);
  } catch (error) {
    server.kill("SIGTERM");
    throw error;
  }
  return { url: `http://localhost:${port}`, pid: server.pid, stop: () => server.kill("SIGTERM") };
}

/** Runs the built app on `env` (the sample network's), measures, and stops it. */
export async function benchApp(
  env: Record<string, string>,
  ttfbDomains: string[],
  pages: { typical: string; bare: string },
  cold?: { own: ColdSet; one: ColdSet & { connectTo: string }; http: readonly string[] },
): Promise<void> {
  if (!existsSync(path.join(root, ".next", "BUILD_ID"))) {
    console.log("app       skipped: no build (run `npm run build` first)");
    return;
  }
  const port = "3210";
  const app = startServer(env, port);
  const base = `http://localhost:${port}`;
  let baseline: Awaited<ReturnType<typeof startBaseline>> = null;
  try {
    await waitFor(`${base}/`, 60_000);
    baseline = cold ? await startBaseline(env, "3230") : null;
    // TTFB on a cold cache, as a browser: each domain once, the last one as a program (whole page).
    // In turn, plain and gzipped as a browser asks (the server flushes its gzip stream at each part).
    const runs: { first: number; header: number; end: number }[] = [];
    const gzipped: typeof runs = [];
    for (const [i, domain] of ttfbDomains.slice(0, -1).entries()) {
      const gzip = i % 2 === 1;
      const headers = gzip ? { ...BROWSER, "accept-encoding": "gzip, deflate, br" } : BROWSER;
      (gzip ? gzipped : runs).push(await timeGet(`${base}/entity/${domain}`, 'data-testid="entity-header"', headers));
    }
    const whole = await timeGet(`${base}/entity/${ttfbDomains.at(-1)}`, 'data-testid="entity-header"', { "user-agent": "curl/8" });
    const times = (r: typeof runs) =>
      `${median(r.map((x) => x.first)).toFixed(0)} ms to first byte, ${median(r.map((x) => x.header)).toFixed(0)} ms to the entity header, ` +
      `${median(r.map((x) => x.end)).toFixed(0)} ms to the whole page`;
    console.log(
      `TTFB      ${times(runs)} (publishers answer in 50 ms; medians of ${runs.length} cold entities, as a browser); ` +
        `gzipped: ${times(gzipped)} (${gzipped.length}); a program gets it whole: first byte at ${whole.first.toFixed(0)} ms`,
    );
    // The other build is taken through the same cold pages first (cold in its own cache), so that
    // both come to Chromium's as warm.
    if (baseline) for (const domain of ttfbDomains) await timeGet(`${baseline.url}/entity/${domain}`, "", BROWSER);
    if (cold)
      console.log(
        await withIdealPage(env, "3220", async (ideal, idealPid) => {
          console.log(await coldBesideBusyLoops(base, ideal, cold.http));
          const shell = { BENCH_SHELL: await captureShell(base), BENCH_ASSETS: base };
          return withIdealPage(Object.assign({}, env, shell), "3222", (shellIdeal, shellPid) =>
            coldInChromium(
              base,
              { plain: ideal, shell: shellIdeal },
              { app: app.pid, ideal: idealPid, others: [shellPid, baseline?.pid] },
              cold.own,
              env.IDENT_CONNECT_TO ?? "",
              "each claim on its own address",
              baseline?.url ?? null,
            ),
          );
        }),
      );
    // Requests per second, warm: an entity page is cached after its first request. Rounds alternate
    // between the pages so that drift on a shared machine falls on all of them alike.
    const urls = {
      home: `${base}/`,
      typical: `${base}/entity/${pages.typical}`,
      twenty: `${base}/entity/${ttfbDomains[0]}`,
      bare: `${base}/entity/${pages.bare}`,
    };
    // The API for the same entity (docs/api.md#speed): a lookup, a search, and a poll that is answered 304.
    const api = {
      resolve: `${base}/api/resolve?q=${ttfbDomains[0]}`,
      search: `${base}/api/search?q=${encodeURIComponent(pages.typical.split(".")[0] ?? "typical")}`,
      // docs/api.md#badges: the same entity's badge, from the index.
      badge: `${base}/entity/${ttfbDomains[0]}/badge.svg`,
    };
    for (const url of [...Object.values(urls), ...Object.values(api)]) await timeGet(url, "");
    // The same warm pages of the build at BENCH_BASE, measured in turn with this one's.
    const other = baseline && {
      home: `${baseline.url}/`,
      twenty: `${baseline.url}/entity/${ttfbDomains[0]}`,
      resolve: `${baseline.url}/api/resolve?q=${ttfbDomains[0]}`,
      badge: `${baseline.url}/entity/${ttfbDomains[0]}/badge.svg`,
    };
    for (const url of Object.values(other ?? {})) await timeGet(url, "");
    const beside: Record<"home" | "twenty" | "resolve" | "badge", { own: number; base: number }[]> = {
      home: [],
      twenty: [],
      resolve: [],
      badge: [],
    };
    const etag = await etagOf(api.resolve);
    for (const url of Object.values(urls)) await rps(url, 2);
    await rps(urls.twenty, 2, app.pid, false, CRAWLER);
    const rounds: Record<
      keyof typeof urls | "rendered" | "crawler" | "resolve" | "search" | "notModified" | "badge",
      { rps: number; cpu: number }[]
    > = {
      home: [],
      typical: [],
      twenty: [],
      bare: [],
      rendered: [],
      crawler: [],
      resolve: [],
      search: [],
      notModified: [],
      badge: [],
    };
    for (let i = 0; i < 3; i++) {
      for (const [k, url] of Object.entries(urls) as [keyof typeof urls, string][]) rounds[k].push(await rps(url, 3, app.pid));
      rounds.crawler.push(await rps(urls.twenty, 3, app.pid, false, CRAWLER));
      rounds.resolve.push(await rps(api.resolve, 3, app.pid, false, PROGRAM));
      rounds.search.push(await rps(api.search, 3, app.pid, false, PROGRAM));
      rounds.notModified.push(await rps(api.resolve, 3, app.pid, false, Object.assign({ "if-none-match": etag }, PROGRAM)));
      rounds.badge.push(await rps(api.badge, 3, app.pid));
      if (other)
        for (const [k, url] of Object.entries(other) as [keyof typeof other, string][]) {
          const own = { home: urls.home, twenty: urls.twenty, resolve: api.resolve, badge: api.badge }[k];
          const headers = k === "resolve" ? PROGRAM : BROWSER;
          const pair = await inPairs(
            i,
            () => rps(own, 3, undefined, false, headers),
            () => rps(url, 3, undefined, false, headers),
          );
          beside[k].push({ own: pair[0].rps, base: pair[1].rps });
        }
    }
    // After the others: rendering afresh leaves garbage that whatever is measured next pays for (the
    // API measured right after it read 0.6 of the page, 0.95 on its own).
    for (let i = 0; i < 3; i++) rounds.rendered.push(await rps(urls.typical, 3, app.pid, true));
    const fig = (k: keyof typeof rounds, over: keyof typeof rounds = "home") => {
      const ratio = median(rounds[k].map((r, i) => r.rps / (rounds[over][i]?.rps ?? NaN)));
      return `${ratio.toFixed(2)} (${median(rounds[k].map((r) => r.rps)).toFixed(0)} req/s, ${median(rounds[k].map((r) => r.cpu)).toFixed(1)} ms CPU)`;
    };
    console.log(
      `rps       warm entity page ÷ / (goal ≥ 0.9 for a browser and a crawler): 20 claims as a browser ${fig("twenty")}, as a crawler ${fig("crawler")}; ` +
        `typical, 7 claims ${fig("typical")}; no claims ${fig("bare")}; ` +
        `/ ${median(rounds.home.map((r) => r.rps)).toFixed(0)} req/s, ${median(rounds.home.map((r) => r.cpu)).toFixed(1)} ms CPU per request\n` +
        `          the typical page rendered afresh each time (every request a page-cache miss: Next renders it, the cache gzips it; documents cached): ${fig("rendered")}`,
    );
    if (other) {
      const ratio = (k: keyof typeof beside) => {
        const rs = beside[k].map((r) => r.own / r.base);
        const { min, max } = spread(rs);
        return `${median(rs).toFixed(2)} × (${min.toFixed(2)}–${max.toFixed(2)})`;
      };
      console.log(
        `baseline  warm req/s, this build ÷ the build at BENCH_BASE (${process.env.BENCH_BASE}), in turn, medians of 3 rounds (goal ≥ 0.95 each): ` +
          `20-claim entity page ${ratio("twenty")}, / ${ratio("home")}, /api/resolve ${ratio("resolve")}, the badge ${ratio("badge")}`,
      );
    }
    console.log(
      `API       ÷ the warm 20-claim entity page as a browser, same entity (docs/api.md#speed): /api/resolve ${fig("resolve", "twenty")} (goal ≥ 0.9); ` +
        `/api/search ${fig("search", "twenty")} (goal ≥ 0.5); a 304 to If-None-Match ${fig("notModified", "twenty")} (goal ≥ 1.0)\n` +
        `          the same entity's badge (docs/api.md#badges) ${fig("badge", "twenty")} (goal ≥ 0.9)`,
    );
  } finally {
    app.kill("SIGTERM");
    baseline?.stop();
  }
  if (cold) {
    // Every claim on one address, as sites on one CDN or Pages host are: an app of its own.
    const oneEnv = Object.assign({}, env, { IDENT_CONNECT_TO: cold.one.connectTo });
    const one = startServer(oneEnv, "3211");
    let oneBaseline: Awaited<ReturnType<typeof startBaseline>> = null;
    try {
      await waitFor("http://localhost:3211/", 60_000);
      oneBaseline = await startBaseline(oneEnv, "3231");
      console.log(
        await withIdealPage(oneEnv, "3221", async (ideal, idealPid) => {
          const shell = { BENCH_SHELL: await captureShell("http://localhost:3211"), BENCH_ASSETS: "http://localhost:3211" };
          return withIdealPage(Object.assign({}, oneEnv, shell), "3223", (shellIdeal, shellPid) =>
            coldInChromium(
              "http://localhost:3211",
              { plain: ideal, shell: shellIdeal },
              { app: one.pid, ideal: idealPid, others: [shellPid, oneBaseline?.pid] },
              cold.one,
              cold.one.connectTo,
              "every claim on one address",
              oneBaseline?.url ?? null,
            ),
          );
        }),
      );
    } finally {
      one.kill("SIGTERM");
      oneBaseline?.stop();
    }
  }
}
