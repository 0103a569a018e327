/**
 * The index's figures (docs/decisions.md#search, docs/decisions.md#discovery), printed by `npm run bench`:
 *
 *   search     p50 and p95 over 100,000 generated entities   goal p95 < 20 ms (PostgreSQL), < 50 ms (PGlite)
 *   sitemap    every sitemap of the 100,000 entities streamed: time, and how far RSS rose
 *   size       the store on disk per 1,000 entities
 *   discovery  entities resolved per second from one seed, publishers answering after 50 ms
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { startCrawler } from "ident-resolver/discovery";
import { parseConnectTo } from "ident-resolver/node";
import { createFetcher } from "ident-resolver/node";
import { createResolverCore } from "ident-resolver";
import { openStore, type Store, type StoreLocation } from "ident-resolver/store";
import { queueStats } from "ident-resolver/store";
import { sitemapCount } from "ident-resolver/store";
import { reindexSearch } from "ident-resolver/store";
import { sitemapStream } from "../web/crawlers";
import { startPostgres } from "../test/helpers/postgres";
import { median } from "./stats";
import { scratchDir } from "../test/helpers/scratch";

const ENTITIES = Number(process.env.BENCH_INDEX_ENTITIES ?? 100_000);
const S = "\u00a7";

const FIRST = [
  "Alice",
  "Zoë",
  "José",
  "Amélie",
  "Bjørn",
  "Chloé",
  "Dmitri",
  "Émile",
  "Farah",
  "Günther",
  "Hana",
  "Inès",
  "Jürgen",
  "Kofi",
  "Léa",
  "Mateo",
  "Nadia",
  "Ola",
  "Priya",
  "Quentin",
  "Rosa",
  "Søren",
  "Tomás",
  "Ulla",
  "Valérie",
  "Wei",
  "Xavier",
  "Yara",
  "Zbigniew",
  "Noémie",
];
const LAST = [
  "Moreau",
  "Müller",
  "García",
  "Nguyen",
  "Okafor",
  "Tanaka",
  "Kowalski",
  "Dubois",
  "Haddad",
  "Lindqvist",
  "Rossi",
  "Schäfer",
  "Ferreira",
  "Novák",
  "O'Brien",
  "Petrović",
  "Yılmaz",
  "Andersen",
  "Bianchi",
  "Côté",
  "Jansen",
  "Kim",
  "López",
  "Mensah",
  "Nakamura",
  "Ortiz",
  "Popescu",
  "Quispe",
  "Řezníček",
  "Sørensen",
  "Takahashi",
  "Umarov",
  "Virtanen",
  "Wójcik",
  "Zhang",
  "Abara",
  "Brennan",
  "Castillo",
  "Duarte",
  "Eriksson",
];
const ORG = [
  "Guild",
  "Workshop",
  "Studio",
  "Cooperative",
  "Press",
  "Foundation",
  "Timber Works",
  "Joinery",
  "Collective",
  "Atelier",
  "Lumber Co.",
  "Society",
  "Association",
  "Trust",
  "Chamber of Commerce",
];
const WHAT = [
  "Makers",
  "Woodworkers",
  "Riverside",
  "Northern",
  "Open Web",
  "Hand-tool",
  "Oak & Ash",
  "Carpenters'",
  "Green",
  "Harbour",
  "Mountain",
  "Valley",
  "City",
  "Coastal",
  "Heritage",
];

const sqlArray = (xs: string[]) => `(ARRAY[${xs.map((x) => `'${x.replace(/'/g, "''")}'`).join(",")}])`;

/** 100,000 entities in one statement: people and organisations with accented names, most accepted. */
export async function generateFor(store: Store, n: number): Promise<void> {
  await store.db.query(
    `INSERT INTO entities (domain, status, network_id, entity_type, details, problems, verified, unverified, first_seen_at, last_checked_at, name, description)
     SELECT d, CASE WHEN i % 10 = 0 THEN 'not_found' ELSE 'accepted' END, '${S}:entity:' || d,
       CASE WHEN i % 3 = 0 THEN 'organization' ELSE 'person' END, '{}', '[]', i % 7, i % 3, now(), now() - make_interval(secs => i),
       name, 'Notes and work of ' || name || ', member since ' || (1990 + i % 35)
     FROM (SELECT i, 'e' || i || '.' || (ARRAY['example','test','org','net'])[1 + i % 4] AS d,
             CASE WHEN i % 3 = 0
               THEN ${sqlArray(WHAT)}[1 + i % ${WHAT.length}] || ' ' || ${sqlArray(ORG)}[1 + (i / ${WHAT.length}) % ${ORG.length}] || ' ' || (i % 997)
               ELSE ${sqlArray(FIRST)}[1 + (i / 3) % ${FIRST.length}] || ' ' || ${sqlArray(LAST)}[1 + (i / ${3 * FIRST.length}) % ${LAST.length}]
             END AS name
           FROM generate_series(1, $1::int) AS i) g`,
    [n],
  );
  await store.db.transaction(reindexSearch);
  await store.db.query("ANALYZE entities");
}

const QUERIES = [
  "alice moreau",
  "zoe muller",
  "Zoë Müller",
  "jose garcia",
  "amelie",
  "bjorn",
  "mak guild",
  "makers guild",
  "riverside chamber",
  "timber",
  "oak ash joinery",
  "open web foundation",
  "nguyen",
  "tanak",
  "o'brien",
  "petrovic",
  "yilmaz",
  "reznicek",
  "alise moreau",
  "moreua",
  "guld",
  "wojcik",
  "e12344.example", // e{i}.{example, test, org, net}[i % 4]
  "§:entity:e777.test",
  "member since 1999",
  "nobody at all here",
  "x",
  "zz",
  "'; DROP TABLE entities; --",
  "😀😀😀",
];

async function searchFigures(name: string, store: Store): Promise<string> {
  for (const q of QUERIES) await store.search(q); // warm-up
  const ms: number[] = [];
  let hits = 0;
  for (let round = 0; round < 5; round++) {
    for (const q of QUERIES) {
      const t0 = performance.now();
      const page = await store.search(q);
      ms.push(performance.now() - t0);
      hits += page?.results.length ?? 0;
    }
  }
  const sorted = [...ms].sort((a, b) => a - b);
  const p95 = sorted[Math.floor(sorted.length * 0.95)]!;
  return `${median(ms).toFixed(1)} ms p50, ${p95.toFixed(1)} ms p95, ${QUERIES.length} queries × 5 (${(hits / 5).toFixed(0)} hits a round) on ${name}`;
}

/**
 * Every sitemap of the index written and read to its end, as a crawler would (docs/decisions.md#crawlers):
 * time, URLs, bytes, and the most this process's RSS rose over it (the engine's own is apart).
 */
async function sitemapFigures(name: string, store: Store): Promise<string> {
  globalThis.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = performance.now();
  const count = await sitemapCount(store.db);
  let bytes = 0;
  let urls = 0;
  for (let n = 0; n < count; n++) {
    const reader = (await sitemapStream(store.db, "https://ident.example", n))?.getReader();
    for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) {
      bytes += read.value.length;
      urls += Buffer.from(read.value).toString("latin1").split("<url>").length - 1;
    }
  }
  const ms = performance.now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  return (
    `${count} sitemaps, ${urls.toLocaleString("en")} URLs, ${(bytes / 1e6).toFixed(1)} MB in ${(ms / 1000).toFixed(2)} s on ${name}; ` +
    `this process's RSS rose ${((peak - rss0) / 1048576).toFixed(0)} MB at most (goal: flat, whatever the index's size)`
  );
}

async function indexOn(name: string, where: StoreLocation, size: () => Promise<number>): Promise<void> {
  const store = await openStore(where, () => {});
  try {
    const t0 = performance.now();
    await generateFor(store, ENTITIES);
    const load = performance.now() - t0;
    console.log(
      `search    ${await searchFigures(name, store)}; ${ENTITIES.toLocaleString("en")} entities written in ${(load / 1000).toFixed(1)} s`,
    );
    console.log(`sitemap   ${await sitemapFigures(name, store)}`);
    await store.db.query("CHECKPOINT");
    console.log(
      `size      ${((await size()) / (ENTITIES / 1000) / 1e6).toFixed(2)} MB on disk per 1,000 entities on ${name} (search columns and indexes included)`,
    );
  } finally {
    await store.close();
  }
}

export async function benchIndex(): Promise<void> {
  const dir = scratchDir("ident-bench-index-");
  const pg = await startPostgres();
  try {
    const dataDir = path.join(dir, "data");
    await indexOn("PGlite", { kind: "embedded", dataDir }, async () =>
      Number(execFileSync("du", ["-sb", dataDir]).toString().split("\t")[0]),
    );
    const url = await pg.database("bench");
    await indexOn("PostgreSQL", { kind: "server", url }, async () => {
      const store = await openStore({ kind: "server", url }, () => {});
      const [row] = await store.db.query<{ n: string }>("SELECT pg_database_size(current_database()) AS n");
      const [empty] = await store.db.query<{ n: string }>("SELECT pg_database_size('template1') AS n");
      await store.close();
      return Number(row!.n) - Number(empty!.n);
    });
  } finally {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Sites for the discovery figure: a tree of entities, each site naming its entity and two more as owners. */
export function crawlSites(n: number): Record<string, { files: Record<string, string> }> {
  const sites: Record<string, { files: Record<string, string> }> = {};
  for (let i = 0; i < n; i++) {
    const entity = `c${i}.crawl`;
    const site = `s${i}.crawl`;
    const owners = [i, 2 * i + 1, 2 * i + 2].filter((k) => k < n).map((k) => ({ network_id: `${S}:entity:c${k}.crawl` }));
    sites[entity] = {
      files: {
        "/ident.json": JSON.stringify({
          entity_type: "person",
          network_id: `${S}:entity:${entity}`,
          details: { name: `Crawl Person ${i}` },
          properties: [{ id: `${S}:property:${site}`, name: `Site ${i}` }],
        }),
      },
    };
    sites[site] = {
      files: { "/ident-property.json": JSON.stringify({ ident_property: { id: `${S}:property:${site}`, ownership: owners } }) },
    };
  }
  return sites;
}

/** Entities per second found and resolved from one seed, 4 at once, each publisher answering after 50 ms. */
export async function benchDiscovery(net: { env: { IDENT_CONNECT_TO: string }; caPem: string }, n: number): Promise<void> {
  const parsed = parseConnectTo(net.env.IDENT_CONNECT_TO);
  if (!parsed.ok) throw new Error(parsed.message);
  const fetcher = createFetcher({ connectTo: parsed.entries, ca: [net.caPem] });
  let wake = () => {};
  const store = await openStore({ kind: "embedded", dataDir: null }, () => {}, {
    discovery: { max: 100_000, freshS: 3600, queued: () => wake() },
  });
  const resolver = createResolverCore({ fetch: fetcher, annotate: (r) => store.record(r) });
  const t0 = performance.now();
  const crawler = startCrawler({
    store,
    resolveEntity: (d) => resolver.resolveEntity(d, { background: true, revalidate: true }),
    concurrency: 4,
    seeds: ["c0.crawl"],
    queue: { max: 100_000, freshS: 3600 },
    pollMs: 100,
    log: () => {},
  });
  wake = crawler.wake;
  for (;;) {
    await new Promise((r) => setTimeout(r, 50));
    const stats = await queueStats(store.db);
    if (stats.due === 0 && stats.running === 0 && crawler.running === 0 && crawler.done > 0) break;
    if (performance.now() - t0 > 300_000) throw new Error("discovery did not settle in 5 minutes");
  }
  const seconds = (performance.now() - t0) / 1000;
  const [accepted] = await store.db.query<{ n: string }>("SELECT count(*) AS n FROM entities WHERE status = 'accepted'");
  await crawler.stop();
  await store.close();
  await fetcher.close();
  console.log(
    `discovery ${(crawler.done / seconds).toFixed(1)} resolutions/s at IDENT_CRAWL_CONCURRENCY=4 with 50 ms publishers: ` +
      `${crawler.done} resolutions (${accepted!.n} of ${n} entities, and their sites) from one seed in ${seconds.toFixed(1)} s`,
  );
}
