/**
 * What crawlers read (docs/decisions.md#crawlers), read back by the parsers crawlers' authors use:
 * `robots-parser` for robots.txt, and the `sitemap` package's index and sitemap parsers, on both of
 * the index's engines. The sitemaps are streamed: a reader that stops early costs one chunk of rows.
 */
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import robotsParser from "robots-parser";
import { parseSitemap, parseSitemapIndex } from "sitemap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "ident-resolver/store";
import type { Queryable, Row } from "ident-resolver/store";
import { sitemapAfter, sitemapChunks } from "ident-resolver/store";
import { robotsTxt, sitemapIndexXml, sitemapNumber, sitemapStream } from "../../web/crawlers";
import { useEngines } from "../helpers/engines";

const ORIGIN = "https://resolver.example";

describe("robots.txt", () => {
  const robots = robotsParser(`${ORIGIN}/robots.txt`, robotsTxt(ORIGIN));
  it.each(["/entity/alice.example", "/issuer/guild.example", "/", "/reasons"])("lets every crawler read %s", (p) => {
    expect(robots.isAllowed(`${ORIGIN}${p}`, "Googlebot")).toBe(true);
    expect(robots.isAllowed(`${ORIGIN}${p}`, "AnyBot/1.0")).toBe(true);
  });
  it.each(["/search?q=alice", "/check?q=alice.example", "/api/resolve?q=alice.example", "/api/search?q=a", "/recheck"])(
    "keeps crawlers out of %s",
    (p) => expect(robots.isAllowed(`${ORIGIN}${p}`, "Googlebot")).toBe(false),
  );
  it("names the sitemap index, absolute", () => expect(robots.getSitemaps()).toEqual([`${ORIGIN}/sitemap.xml`]));
});

describe("sitemap file names", () => {
  it.each([
    ["0.xml", 0],
    ["12.xml", 12],
    ["01.xml", null],
    ["-1.xml", null],
    ["1.xml.gz", null],
    ["x.xml", null],
    ["99999999.xml", null],
  ] as const)("%s → %s", (file, n) => expect(sitemapNumber(file)).toBe(n));
});

const { engines: ENGINES } = useEngines("crawlers");

/** `db` with every statement counted. */
function counting(db: Queryable): Queryable & { statements: number } {
  const counted = {
    statements: 0,
    query<T extends Row = Row>(sql: string, params?: unknown[]) {
      counted.statements++;
      return db.query<T>(sql, params);
    },
  };
  return counted;
}

describe.each(ENGINES)("sitemaps on $name", ({ location }) => {
  let store: Store;
  const ACCEPTED = 2_250;
  beforeAll(async () => {
    store = await openStore(await location());
    // 2,500 entities; every tenth never accepted, which no sitemap lists.
    await store.db.query(
      `INSERT INTO entities (domain, status, network_id, entity_type, details, problems, first_seen_at, last_checked_at)
       SELECT 'e' || lpad(i::text, 5, '0') || '.example', CASE WHEN i % 10 = 0 THEN 'not_found' ELSE 'accepted' END,
              '§:entity:e' || i, 'person', '{}', '[]', now(), timestamptz '2026-01-01T00:00:00Z' + make_interval(secs => i)
       FROM generate_series(1, 2500) AS i`,
    );
  }, 60_000);
  afterAll(() => store?.close());

  it("the index names one sitemap per 1,000 (here) accepted entities, and a sitemap parser reads it", async () => {
    const index = await parseSitemapIndex(Readable.from([await sitemapIndexXml(store.db, ORIGIN, 1000)]));
    expect(index.map((s) => s.url)).toEqual([0, 1, 2].map((n) => `${ORIGIN}/sitemaps/${n}.xml`));
  });

  it("the sitemaps list every accepted entity's page once, absolute, with its last check; none past the last", async () => {
    const urls: { url: string; lastmod?: string }[] = [];
    for (let n = 0; n < 3; n++) {
      const stream = await sitemapStream(store.db, ORIGIN, n, 1000);
      if (!stream) throw new Error(`sitemap ${n} missing`);
      const items = await parseSitemap(Readable.fromWeb(stream as NodeReadableStream));
      expect(items.length).toBe(n < 2 ? 1000 : ACCEPTED - 2000);
      urls.push(...items);
    }
    expect(new Set(urls.map((u) => u.url)).size).toBe(ACCEPTED);
    expect(urls[0]).toMatchObject({ url: `${ORIGIN}/entity/e00001.example`, lastmod: "2026-01-01T00:00:01.000Z" });
    expect(urls.some((u) => u.url.includes("e00010.example"))).toBe(false);
    expect(await sitemapStream(store.db, ORIGIN, 3, 1000)).toBeNull();
  });

  it("read in turn, each sitemap begins where the one before ended, with no OFFSET; one asked first is counted to from the nearest known", async () => {
    const seen: string[] = [];
    const db = Object.assign(counting(store.db), { sql: [] as string[] });
    const spy: Queryable = { query: (sql, params) => (db.sql.push(sql), db.query(sql, params)) };
    const read = async (n: number) => {
      const items = await parseSitemap(Readable.fromWeb((await sitemapStream(spy, ORIGIN, n, 1000, 300)) as NodeReadableStream));
      return items.map((i) => i.url);
    };
    for (const n of [0, 1, 2]) seen.push(...(await read(n)));
    expect(seen.length).toBe(ACCEPTED);
    expect(new Set(seen).size).toBe(ACCEPTED);
    expect(db.sql.filter((q) => q.includes("OFFSET"))).toEqual([]);
    // Another store seen afresh: sitemap 2 first counts 2,000 on from the start; then 1 counts 1,000.
    const cold = Object.assign(counting(store.db), { sql: [] as string[] });
    const coldSpy: Queryable = { query: (sql, params) => (cold.sql.push(sql), cold.query(sql, params)) };
    const two = await parseSitemap(Readable.fromWeb((await sitemapStream(coldSpy, ORIGIN, 2, 1000, 300)) as NodeReadableStream));
    expect(two.map((i) => i.url)).toEqual(seen.slice(2000));
    expect(cold.sql.filter((q) => q.includes("OFFSET"))).toHaveLength(1);
  });

  it("entries are read a chunk at a time (keyset): across chunk edges none is lost or repeated", async () => {
    const seen: string[] = [];
    for await (const rows of sitemapChunks(store.db, (await sitemapAfter(store.db, 1, 1000)) ?? null, 1000, 7))
      seen.push(...rows.map((e) => e.domain));
    expect(seen.length).toBe(1000);
    expect(new Set(seen).size).toBe(1000);
    expect([...seen].sort()).toEqual(seen);
  });

  it("a reader that stops after the first bytes has cost a chunk of rows, not the sitemap; one reading to the end, every chunk", async () => {
    const early = counting(store.db);
    const stream = await sitemapStream(early, ORIGIN, 0, 50_000, 100);
    const reader = stream?.getReader();
    await reader?.read();
    await reader?.cancel();
    const whole = counting(store.db);
    await parseSitemap(Readable.fromWeb((await sitemapStream(whole, ORIGIN, 0, 50_000, 100)) as NodeReadableStream));
    // The first row's statement and one chunk.
    expect(early.statements).toBeLessThanOrEqual(2);
    expect(whole.statements).toBeGreaterThanOrEqual(ACCEPTED / 100);
  });

  it("a chunk the engine fails to give errs the stream: the reader is told, never left waiting", async () => {
    // Every statement after the first two fails: the third chunk is never read.
    const failing = (db: Queryable): Queryable => {
      let n = 0;
      return { query: (sql, params) => (++n > 2 ? Promise.reject(new Error("the engine went away")) : db.query(sql, params)) };
    };
    const reader = (await sitemapStream(failing(store.db), ORIGIN, 0, 1000, 100))?.getReader();
    const readAll = async () => {
      for (;;) if ((await reader?.read())?.done !== false) return;
    };
    await expect(readAll()).rejects.toThrow("the engine went away");
  });

  it("a sitemap past the last is 404 without reading the index up to it", async () => {
    const db = counting(store.db);
    expect(await sitemapStream(db, ORIGIN, 9_999_999)).toBeNull();
    expect(await sitemapStream(db, ORIGIN, 9_999_998)).toBeNull();
    // One count, remembered for a minute; no OFFSET read.
    expect(db.statements).toBeLessThanOrEqual(1);
  });
});

describe("an empty index", () => {
  it("still has sitemap 0, empty, and no sitemap 1", async () => {
    const empty = await openStore({ kind: "embedded", dataDir: null });
    try {
      const stream = await sitemapStream(empty.db, ORIGIN, 0);
      expect(await parseSitemap(Readable.fromWeb(stream as NodeReadableStream))).toEqual([]);
      expect(await sitemapStream(empty.db, ORIGIN, 1)).toBeNull();
    } finally {
      await empty.close();
    }
  });
});
