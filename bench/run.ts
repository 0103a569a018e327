/**
 * `npm run bench`: performance goals as printed figures, medians over several runs (never asserted
 * in tests). Everything runs against the sample network on loopback with 50 ms added to every
 * response.
 *
 *   fan-out  (time(10 properties + 10 credentials) - time(no claims)) / 50 ms   limit 1.0, goal ≤ 1.2;
 *            over the floor (÷ a bare client's, which dials the same addresses), with each claim on its own
 *            address and with all on one, goal ≤ 1.1 × each
 *   sharing  publisher requests for 20 concurrent cold resolutions of one domain  goal 1
 *   memory   extra RSS after resolving a document with 10,000 credential entries  goal < 50 MB
 *   search, size, discovery: the index's figures (bench/index.ts)
 *
 *   fleet: sharing over 2 instances, warm lookups/s with 1 and 2, the Redis tier's cost (bench/fleet.ts)
 *   library: the package's import time, and a cold resolve() through it ÷ /api/resolve and ÷ a bare client (bench/library.ts)
 *   notices: a change → its webhook and WebSub deliveries, 10,000 subscribers (100 hanging), a SIGKILL, a fleet, and a
 *            followed entity re-checked by itself (bench/notices.ts; `BENCH_ONLY=notices`, needs `npm run build`)
 *
 * `BENCH_ONLY=index` prints the index's figures alone, `BENCH_ONLY=app` the app's (TTFB, cold pages in
 * Chromium beside the ideal page, rps),
 * `BENCH_ONLY=fleet` the fleet's, `BENCH_ONLY=library` the package's, `BENCH_ONLY=resolver` fan-out, sharing and memory, `BENCH_ONLY=export`
 * moving the index: export and import at 100k entities on both engines, and 1M into PostgreSQL (bench/export.ts).
 * `npm run bench -- scale` (or `BENCH_ONLY=scale`) search, sitemaps, job claims and size at 100k and 1M entities (bench/scale.ts).
 * `BENCH_TRACE=1` also prints, for each cold page opened in Chromium, when each piece of it reached the
 * browser's network layer beside when its header was in the page and visible (bench/app.ts, openCold);
 * `BENCH_CHROME_TRACE=dir` writes a Chromium performance trace of each of those pages into dir.
 * `BENCH_BASE=dir` (another checkout, built: say `git worktree add dir main`, then `npm ci` and
 * `npm run build` in it) opens that build's cold pages in turn with this one's and the ideal page's,
 * and prints this build's times ÷ that one's (bench/app.ts): a change measured in one run.
 * `BENCH_PAGES=n` opens n cold pages of each kind a run instead of 7: a change of a tenth needed 30.
 */
import { answered } from "../test/helpers/answered";
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseConnectTo } from "ident-resolver/node";
import { createFetcher, type Fetcher } from "ident-resolver/node";
import { createResolverCore } from "ident-resolver";
import { spawnSampleNetwork } from "../test/network/spawn";
import { benchApp } from "./app";
import type { BareInput, BareOutput } from "./bare-client";
import { benchExport } from "./export";
import { benchScale } from "./scale";
import { benchFleet } from "./fleet";
import { benchLibrary } from "./library";
import { benchNotices } from "./notices";
import { benchDiscovery, benchIndex, crawlSites } from "./index";
import { median } from "./stats";
import { scratchDir } from "../test/helpers/scratch";

const DELAY_MS = 50;
const TTFB_RUNS = 11;
/** Cold no-claim pages over HTTP, at rest and again beside busy loops (bench/app.ts, coldBesideBusyLoops). */
const HTTP_RUNS = 12;
/** Cold pages opened in Chromium per kind and run (bench/app.ts); `BENCH_PAGES` for more, to judge a small change. */
const BROWSER_RUNS = Number(process.env.BENCH_PAGES ?? 7);
if (!Number.isInteger(BROWSER_RUNS) || BROWSER_RUNS < 1)
  throw new Error(`BENCH_PAGES=${process.env.BENCH_PAGES}: a whole number, 1 or more`);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
/** Cold pages, without claims and with 20, that each server answers before Chromium times any (bench/app.ts, warmUp). */
const WARM_ZERO = 150;
const WARM_TWENTY = 25;
const CRAWL_ENTITIES = 100;
const ONLY_INDEX = process.env.BENCH_ONLY === "index";
const ONLY_APP = process.env.BENCH_ONLY === "app";
const ONLY_FLEET = process.env.BENCH_ONLY === "fleet";
const ONLY_RESOLVER = process.env.BENCH_ONLY === "resolver";
const ONLY_LIBRARY = process.env.BENCH_ONLY === "library";
/** Cold 20-claim lookups through the package, and as many through /api/resolve (bench/library.ts). */
const LIBRARY_RUNS = 9;
const ONLY_EXPORT = process.env.BENCH_ONLY === "export";
const ONLY_NOTICES = process.env.BENCH_ONLY === "notices";
/** Search at a million entities (bench/scale.ts): asked for by name, being long (`npm run bench -- scale`). */
const ONLY_SCALE = process.env.BENCH_ONLY === "scale" || process.argv.slice(2).includes("scale");
const S = "\u00a7";

const json = (v: unknown) => JSON.stringify(v);

type Files = { files: Record<string, string> };

/**
 * The entity `d` with 20 claims that verify, 10 properties and 10 credentials, each on a site of its
 * own (`{host}p{j}.bench`; `{host}i{j}.bench`, its credential under `/{dir}/`); `shown` adds to its document.
 */
function withTwentyClaims(sites: Record<string, Files>, d: string, host: string, dir: string, shown: Record<string, unknown> = {}) {
  const own = { properties: [] as unknown[], credentials: [] as unknown[] };
  for (let j = 0; j < 10; j++) {
    const id = `${S}:property:${host}p${j}.bench`;
    own.properties.push({ id });
    sites[`${host}p${j}.bench`] = {
      files: { "/ident-property.json": json({ ident_property: { id, ownership: [{ network_id: `${S}:entity:${d}` }] } }) },
    };
    own.credentials.push({ id: `@${dir}@${host}i${j}.bench` });
    sites[`${host}i${j}.bench`] = {
      files: {
        [`/${dir}/ident-credential.json`]: json({ ident_entity_id: `${S}:entity:${d}`, ident_credential: { title: `Credential ${j}` } }),
      },
    };
  }
  sites[d] = { files: { "/ident.json": json(Object.assign({ network_id: `${S}:entity:${d}` }, shown, own)) } };
}

function benchSites(): Record<string, Files> {
  const sites: Record<string, Files> = {
    "empty.bench": { files: { "/ident.json": json({ network_id: `${S}:entity:empty.bench` }) } },
    // The app's shell (bench/app.ts, captureShell): a cold page whose entity document comes 200 ms late.
    "shell.bench": {
      files: {
        "/ident.json": json({ network_id: `${S}:entity:shell.bench`, details: { name: "Shell" } }),
        "/site.json": json({ routes: { "/ident.json": { delay_ms: 200 - DELAY_MS } } }),
      },
    },
  };
  const properties = [];
  const credentials = [];
  for (let i = 0; i < 10; i++) {
    // Each claim on its own host, as on the real web: the per-host limit of 6 is not what is measured.
    properties.push({ id: `${S}:property:p${i}.bench` });
    sites[`p${i}.bench`] = {
      files: {
        "/ident-property.json": json({
          ident_property: { id: `${S}:property:p${i}.bench`, ownership: [{ network_id: `${S}:entity:fan.bench` }] },
        }),
      },
    };
    credentials.push({ id: `@fan@i${i}.bench` });
    sites[`i${i}.bench`] = {
      files: {
        "/fan/ident-credential.json": json({ ident_entity_id: `${S}:entity:fan.bench`, ident_credential: { title: `Credential ${i}` } }),
      },
    };
  }
  Object.assign(sites, crawlSites(CRAWL_ENTITIES));
  sites["fan.bench"] = { files: { "/ident.json": json({ network_id: `${S}:entity:fan.bench`, properties, credentials }) } };
  // Entities for the page TTFB figure, each with 20 claims of its own that verify: each entity is
  // fetched once, so its page is cold, claims included.
  for (let i = 0; i < TTFB_RUNS; i++)
    withTwentyClaims(sites, `ttfb${i}.bench`, `t${i}`, "ttfb", { entity_type: "person", details: { name: `Bench ${i}` } });

  // Cold entities for the pages measured in Chromium (bench/app.ts): with 20 claims (as above) and
  // with none, a set for each of the app's two runs (claims on their own addresses, and on one), and
  // the same again for the ideal page (bench/ideal-page.ts) and for the build at BENCH_BASE, so that
  // each page opened is cold.
  const pages = ["own", "one"].flatMap((run) => [
    ["c", "z", run] as const,
    ["ideal", "idealz", run] as const,
    ["shell", "shellz", run] as const,
    ...(process.env.BENCH_BASE ? [["base", "basez", run] as const] : []),
  ]);
  for (const [page, zero, run] of pages)
    for (let i = 0; i < BROWSER_RUNS; i++) {
      withTwentyClaims(sites, `${page}${run}${i}.bench`, `${page}${run}${i}`, "c", {
        entity_type: "person",
        details: { name: `Cold ${i}` },
      });
      const z = `${zero}${run}${i}.bench`;
      sites[z] = {
        files: { "/ident.json": json({ entity_type: "person", network_id: `${S}:entity:${z}`, details: { name: `Zero ${i}` } }) },
      };
    }
  // The cold pages each server answers before Chromium times any (bench/app.ts, warmUp): shared by
  // every server, each of which keeps its own cache. Their claims on their own sites, as above.
  for (let i = 0; i < WARM_ZERO; i++) {
    const d = `warm${i}.bench`;
    sites[d] = {
      files: { "/ident.json": json({ entity_type: "person", network_id: `${S}:entity:${d}`, details: { name: `Warm ${i}` } }) },
    };
  }
  for (let i = 0; i < WARM_TWENTY; i++)
    withTwentyClaims(sites, `warmc${i}.bench`, `warmc${i}`, "w", { entity_type: "person", details: { name: `Warm ${i}` } });
  // Cold 20-claim entities for the package's lookups and the API's (bench/library.ts).
  for (const side of ["lib", "api"])
    for (let i = 0; i < LIBRARY_RUNS; i++) withTwentyClaims(sites, `${side}${i}.bench`, `${side}${i}`, "l");
  // Cold no-claim entities for the page over HTTP at rest and beside busy loops (bench/app.ts, coldBesideBusyLoops).
  for (let i = 0; i < 2 * HTTP_RUNS; i++)
    sites[`http${i}.bench`] = {
      files: { "/ident.json": json({ entity_type: "person", network_id: `${S}:entity:http${i}.bench`, details: { name: `Http ${i}` } }) },
    };
  // A typical entity, shaped like alice.example: full details, 2 properties, 3 credentials, 2 connections.
  const typical = { properties: [] as unknown[], credentials: [] as unknown[], other_connections: [] as unknown[] };
  for (let i = 0; i < 2; i++) {
    const id = `${S}:property:tp${i}.bench`;
    typical.properties.push({
      id,
      name: `Workshop notes ${i}`,
      url: `https://tp${i}.bench/`,
      type: "Website",
      description: "Long-form notes on hand-tool joinery.",
    });
    sites[`tp${i}.bench`] = {
      files: {
        "/ident-property.json": json({
          ident_property: { id, name: `Workshop notes ${i}`, ownership: [{ network_id: `${S}:entity:typical.bench` }] },
        }),
      },
    };
    typical.other_connections.push({ id: `https://tc${i}.bench/@typical` });
    sites[`tc${i}.bench`] = {
      files: { "/@typical": '<!doctype html><title>Typical</title><a rel="me" href="https://typical.bench/">me</a>' },
    };
  }
  for (let i = 0; i < 3; i++) {
    const property = { id: `${S}:property:ti${i}.bench`, name: `Guild ${i}`, url: `https://ti${i}.bench/` };
    typical.credentials.push({
      id: `@typical@ti${i}.bench/members`,
      title: "Member",
      type: "Member",
      property,
      dataset: { name: "Guild members" },
    });
    sites[`ti${i}.bench`] = {
      files: {
        "/members/typical/ident-credential.json": json({
          ident_entity_id: `${S}:entity:typical.bench`,
          ident_credential: { title: `Member ${i}`, type: "Member", property },
        }),
      },
    };
  }
  const details = {
    name: "Typical Person",
    email: "t@typical.bench",
    location: "Lyon, France",
    description: "Furniture maker and writer.",
  };
  sites["typical.bench"] = {
    files: { "/ident.json": json({ entity_type: "person", network_id: `${S}:entity:typical.bench`, details, ...typical }) },
  };
  const many = Array.from({ length: 10_000 }, (_, i) => ({ id: `@u${i}@issuer${i % 100}.bench`, title: `Member ${i}`, type: "Member" }));
  sites["many.bench"] = { files: { "/ident.json": json({ network_id: `${S}:entity:many.bench`, credentials: many }) } };
  for (let k = 0; k < 100; k++) sites[`issuer${k}.bench`] = { files: {} };
  return sites;
}

/** Writes the bench publishers as a sample-network folder. */
function writeSites(root: string) {
  for (const [domain, site] of Object.entries(benchSites())) {
    mkdirSync(path.join(root, domain), { recursive: true });
    for (const [file, text] of Object.entries(site.files)) {
      mkdirSync(path.dirname(path.join(root, domain, file)), { recursive: true });
      writeFileSync(path.join(root, domain, file), text);
    }
  }
}

/** The bare client's cold fan-out (bench/bare-client.ts), in a process of its own, each claim on its own address and all on one. */
function bareFanOut(connectTo: BareInput["connectTo"], caFile: string): BareOutput {
  const input: BareInput = { connectTo, caFile, runs: RUNS, delayMs: DELAY_MS };
  const out = spawnSync(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "bare-client.ts")], {
    input: JSON.stringify(input),
    encoding: "utf8",
    timeout: 120_000,
  });
  if (out.status !== 0) throw new Error(`bare client: ${out.stderr}`);
  return JSON.parse(out.stdout) as BareOutput;
}

async function main() {
  if (ONLY_SCALE) return benchScale();
  if (ONLY_NOTICES) return benchNotices();
  // The publishers run in their own process, so their TLS work is not timed as the resolver's.
  const root = scratchDir("ident-bench-");
  writeSites(root);
  const net = await spawnSampleNetwork({ root, delayMs: DELAY_MS });
  try {
    await measure(net);
  } finally {
    await net.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

async function measure(net: Awaited<ReturnType<typeof spawnSampleNetwork>>) {
  if (ONLY_FLEET) return benchFleet();
  if (ONLY_APP) return benchTheApp(net);
  if (ONLY_RESOLVER) return measureResolver(net);
  if (ONLY_LIBRARY) return measureLibrary(net);
  if (ONLY_EXPORT) return benchExport();
  if (!ONLY_INDEX) await measureResolver(net);
  await benchDiscovery(net, CRAWL_ENTITIES);
  await benchIndex();
  await benchExport();
  if (!ONLY_INDEX) await benchFleet();
  if (!ONLY_INDEX) await benchNotices();
}

async function measureResolver(net: Awaited<ReturnType<typeof spawnSampleNetwork>>) {
  const parsed = parseConnectTo(net.env.IDENT_CONNECT_TO);
  if (!parsed.ok) throw new Error(parsed.message);
  // Every claim on one address, as sites on one CDN or Pages host are (docs/decisions.md#budget).
  const oneAddress = parseConnectTo(net.connectToOne);
  if (!oneAddress.ok) throw new Error(oneAddress.message);
  /** Publisher requests, counted where they leave the resolver. */
  const requests = new Map<string, number>();
  const fresh = (connectTo = parsed.entries) => {
    const fetcher = createFetcher({ connectTo, ca: [net.caPem] });
    const counted: Fetcher = (url, mode) => {
      requests.set(url, (requests.get(url) ?? 0) + 1);
      return fetcher(url, mode);
    };
    return { fetcher, resolver: createResolverCore({ fetch: counted }) };
  };
  const time = async (domain: string, connectTo = parsed.entries) => {
    const { fetcher, resolver } = fresh(connectTo);
    const t0 = performance.now();
    const r = answered(await resolver.resolveEntity(domain));
    const ms = performance.now() - t0;
    await fetcher.close();
    if (r.entity.status !== "accepted") throw new Error(`${domain}: ${r.entity.status}`);
    return { ms, verified: [...r.properties, ...r.credentials].filter((c) => c.verified).length };
  };

  // fan-out: cold = new fetcher (new TLS connections to 21 hosts) and empty cache; warm = connections
  // kept from an earlier run, cache still empty, so only the resolver's own fan-out is timed.
  await time("fan.bench"); // warm-up: module loading and JIT
  const warmFetcher = createFetcher({ connectTo: parsed.entries, ca: [net.caPem] });
  const warm = async (domain: string) => {
    const t0 = performance.now();
    const r = answered(await createResolverCore({ fetch: warmFetcher }).resolveEntity(domain));
    if (r.entity.status !== "accepted") throw new Error(domain);
    return performance.now() - t0;
  };
  await warm("fan.bench");
  await warm("empty.bench");
  const cold = { ratios: [] as number[], fans: [] as number[], empties: [] as number[] };
  const coldOne = { ratios: [] as number[], fans: [] as number[], empties: [] as number[] };
  const hot = { ratios: [] as number[], fans: [] as number[], empties: [] as number[] };
  /** One cold fan-out, its claims on the addresses `connectTo` sends them to. */
  const coldRun = async (into: typeof cold, connectTo = parsed.entries) => {
    const empty = await time("empty.bench", connectTo);
    const fan = await time("fan.bench", connectTo);
    if (fan.verified !== 20) throw new Error(`fan-out: ${fan.verified} of 20 claims verified`);
    into.empties.push(empty.ms);
    into.fans.push(fan.ms);
    into.ratios.push((fan.ms - empty.ms) / DELAY_MS);
  };
  await time("fan.bench", oneAddress.entries); // warm-up of the one address
  for (let i = 0; i < RUNS; i++) {
    // Alternated, so that both cases meet the machine in the same state.
    await coldRun(cold);
    await coldRun(coldOne, oneAddress.entries);
    const e = await warm("empty.bench");
    const f = await warm("fan.bench");
    hot.empties.push(e);
    hot.fans.push(f);
    hot.ratios.push((f - e) / DELAY_MS);
  }
  await warmFetcher.close();
  const line = (label: string, m: typeof cold) =>
    `fan-out   ${median(m.ratios).toFixed(2)} round trips for 20 claims, ${label} (limit 1.0, goal ≤ 1.2, sequential 20); ` +
    `median ${median(m.fans).toFixed(0)} ms vs ${median(m.empties).toFixed(0)} ms with no claims, ${RUNS} runs`;
  console.log(line("new connections", cold));
  console.log(line("new connections, every claim on one address", coldOne));
  console.log(line("kept connections", hot));
  const floor = bareFanOut({ own: net.env.IDENT_CONNECT_TO, one: net.connectToOne }, net.env.NODE_EXTRA_CA_CERTS);
  const overFloor = (label: string, m: typeof cold, bare: BareOutput["own"]) =>
    `fan-out   over the floor, ${label}: ${(median(m.ratios) / bare.ratio).toFixed(2)} × (goal ≤ 1.1 ×): the resolver's cold fan-out ` +
    `${median(m.ratios).toFixed(2)} round trips ÷ a bare client's ${bare.ratio.toFixed(2)} (median ${median(m.fans).toFixed(0)} ms vs ` +
    `${bare.fanMs.toFixed(0)} ms; medians of ${RUNS} runs each; the bare client: entity, then 20 documents at once on new connections, in another process)`;
  console.log(overFloor("each claim on its own address", cold, floor.own));
  console.log(overFloor("every claim on one address", coldOne, floor.one));

  // sharing
  const shared: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    requests.clear();
    const { fetcher, resolver } = fresh();
    await Promise.all(Array.from({ length: 20 }, () => resolver.resolveEntity("fan.bench")));
    await fetcher.close();
    shared.push(requests.get("https://fan.bench/ident.json") ?? 0);
  }
  const perClaim = requests.get("https://p0.bench/ident-property.json") ?? 0;
  console.log(
    `sharing   ${median(shared)} request(s) to fan.bench/ident.json for 20 concurrent cold resolutions (goal 1); ` +
      `${perClaim} to each claim document`,
  );

  // memory
  const gc = (globalThis as { gc?: () => void }).gc;
  const rss: number[] = [];
  for (let i = 0; i < Math.min(RUNS, 5); i++) {
    gc?.();
    const before = process.memoryUsage().rss;
    const { fetcher, resolver } = fresh();
    const r = answered(await resolver.resolveEntity("many.bench"));
    // 1,000 entries are reported claim by claim, the rest counted in one warning (MAX_REPORTED_ENTRIES).
    if (r.credentials.length !== 1000 || !r.entity.problems.some((p) => p.code === "too_many_entries"))
      throw new Error("memory: unexpected claims");
    gc?.();
    rss.push((process.memoryUsage().rss - before) / 1e6);
    await fetcher.close();
  }
  console.log(
    `memory    ${median(rss).toFixed(1)} MB extra RSS after resolving a document of 10,000 credential entries (goal < 50 MB)` +
      `${gc ? "" : " (run with --expose-gc for steadier figures)"}`,
  );
  await measureLibrary(net);
  await benchTheApp(net);
}

/** The package's figures, beside the bare client's cold fan-out on the same network. */
async function measureLibrary(net: Awaited<ReturnType<typeof spawnSampleNetwork>>) {
  const floor = bareFanOut({ own: net.env.IDENT_CONNECT_TO, one: net.connectToOne }, net.env.NODE_EXTRA_CA_CERTS);
  const domains = (side: string) => Array.from({ length: LIBRARY_RUNS }, (_, i) => `${side}${i}.bench`);
  await benchLibrary(net.env, { library: domains("lib"), api: domains("api") }, floor.own.fanMs);
}

async function benchTheApp(net: Awaited<ReturnType<typeof spawnSampleNetwork>>) {
  const floor = bareFanOut({ own: net.env.IDENT_CONNECT_TO, one: net.connectToOne }, net.env.NODE_EXTRA_CA_CERTS);
  const cold = (run: "own" | "one") => ({
    floor: floor[run],
    twenty: Array.from({ length: BROWSER_RUNS }, (_, i) => `c${run}${i}.bench`),
    zero: Array.from({ length: BROWSER_RUNS }, (_, i) => `z${run}${i}.bench`),
    ideal: {
      twenty: Array.from({ length: BROWSER_RUNS }, (_, i) => `ideal${run}${i}.bench`),
      zero: Array.from({ length: BROWSER_RUNS }, (_, i) => `idealz${run}${i}.bench`),
    },
    shell: {
      twenty: Array.from({ length: BROWSER_RUNS }, (_, i) => `shell${run}${i}.bench`),
      zero: Array.from({ length: BROWSER_RUNS }, (_, i) => `shellz${run}${i}.bench`),
    },
    baseline: {
      twenty: Array.from({ length: BROWSER_RUNS }, (_, i) => `base${run}${i}.bench`),
      zero: Array.from({ length: BROWSER_RUNS }, (_, i) => `basez${run}${i}.bench`),
    },
    // As benchSites makes them for c{run}{i}.bench, ideal{run}{i}.bench and base{run}{i}.bench.
    claimsOf: (d: string) =>
      Array.from({ length: 10 }, (_, j) => [
        `https://${d.slice(0, -6)}p${j}.bench/ident-property.json`,
        `https://${d.slice(0, -6)}i${j}.bench/c/ident-credential.json`,
      ]).flat(),
    warm: {
      zero: Array.from({ length: WARM_ZERO }, (_, i) => `warm${i}.bench`),
      twenty: Array.from({ length: WARM_TWENTY }, (_, i) => `warmc${i}.bench`),
    },
  });
  await benchApp(
    net.env,
    Array.from({ length: TTFB_RUNS }, (_, i) => `ttfb${i}.bench`),
    { typical: "typical.bench", bare: "empty.bench" },
    {
      own: cold("own"),
      one: Object.assign(cold("one"), { connectTo: net.connectToOne }),
      http: Array.from({ length: 2 * HTTP_RUNS }, (_, i) => `http${i}.bench`),
    },
  );
}

await main();
