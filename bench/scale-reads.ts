/**
 * The reads of the scale bench (bench/scale.ts) over HTTP against the running app: each kind of
 * search with one searcher and then with eight at once, each request a text the app's cache has not
 * seen; the badge, an issuer's members page and sitemap files. p95 of each (docs/decisions.md#search-at-size).
 */
import { request } from "node:http";
import { domainOf } from "./export";
import { p95, type App } from "./load-kit";
import { word } from "./scale-data";
import { median } from "./stats";

/**
 * The app's settings for the bench: each searcher a client of its own (one hop trusted), and budgets
 * a minute no bench run reaches; the limits of searches in progress and at once stay as they are.
 */
export const SCALE_APP_ENV = { IDENT_TRUSTED_HOPS: "1", IDENT_SEARCHES_PER_MIN: "1000000", IDENT_STORE_READS_PER_MIN: "1000000" };

/** Searches of each kind with one searcher, and again with {@link SEARCHERS} at once. */
export const REQUESTS = 60;
export const SEARCHERS = 8;

/** Every spelling of `w` by case (its first 2^letters), so that each request is new to the app's cache. */
function casings(w: string, n: number): string[] {
  const out: string[] = [];
  for (let mask = 0; out.length < n && mask < 1 << Math.min(w.length, 12); mask++)
    out.push([...w].map((c, i) => ((mask >> i) & 1 ? c.toUpperCase() : c)).join(""));
  return out;
}

/** Spread numbers of entities in [0, n): the `i`th of `count`. */
const spreadEntity = (i: number, count: number, n: number) => Math.floor(((i + 0.5) * n) / count) % n;

/**
 * `count` texts of each kind, every one distinct: the first {@link REQUESTS} for one searcher, the
 * next for eight at once. Entity domains are drawn from `n` entities.
 */
export function searchTexts(n: number, count = 2 * REQUESTS): Record<string, string[]> {
  const make = (f: (i: number) => string) => Array.from({ length: count }, (_, i) => f(i));
  const per = (words: number, spellings: (w: string, k: number) => string[]) => {
    const each = Math.ceil(count / words);
    return Array.from({ length: words }, (_, k) => spellings(word(k), each))
      .flat()
      .slice(0, count);
  };
  return {
    // The four commonest words (in about 1 name in 6, 11, 16 and 21), each in 30 spellings by case.
    "common word": per(4, (w, each) => casings(w, each)),
    "rare word": make((i) => word(10_000 + i * 75)),
    // Pairs of common words, each pair once.
    "two words": make((i) => `${word(i % 6)} ${word(6 + Math.floor(i / 6))}`),
    // A letter of a common word replaced by one no word has: nothing matches, so typos are looked for.
    typo: per(count / 2, (w, each) => casings(`${w.slice(0, 2)}x${w.slice(3)}`, each)),
    // The first three letters of common words, each in 8 spellings by case.
    prefix: per(Math.ceil(count / 8), (w, each) => casings(w.slice(0, 3), each)),
    // An entity's own domain, and a host under it (its blog, a property it claims).
    domain: make((i) => domainOf(spreadEntity(i, count, n))),
    subdomain: make((i) => `blog.${domainOf((spreadEntity(i, count, n) + 1) % n)}`),
  };
}

export type Timed = { status: number; ms: number; bytes: number; body?: string };

/** A GET's status and time, its body read (and kept when `keep`). */
export function timed(port: number, target: string, keep = false, headers: Record<string, string> = {}): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request({ host: "127.0.0.1", port, path: target, agent: false, headers }, (res) => {
      let bytes = 0;
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => {
        bytes += c.length;
        if (keep) parts.push(c);
      });
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          ms: performance.now() - t0,
          bytes,
          ...(keep ? { body: Buffer.concat(parts).toString("utf8") } : {}),
        }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

export const ms = (x: number) => (x < 10 ? x.toFixed(1) : x.toFixed(0));

/** p50 / p95 / max of `times`, with how many answers were not 200. */
export function summary(times: number[], bad: number): string {
  return `p50 ${ms(median(times))} / p95 ${ms(p95(times))} / max ${ms(Math.max(...times))} ms${bad > 0 ? ` (${bad} NOT 200)` : ""}`;
}

/**
 * `targets` read by `clients` at once, each its own share in turn and a client of its own to the app
 * (an address of its own in `X-Forwarded-For`, the app trusting one hop: {@link SCALE_APP_ENV}):
 * every request's time, and the answers not 200.
 */
export async function readAll(port: number, targets: string[], clients = 1): Promise<{ times: number[]; bad: number; hits: number }> {
  const times: number[] = [];
  let bad = 0;
  let hits = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = c; i < targets.length; i += clients) {
        const r = await timed(port, targets[i] ?? "/", false, { "x-forwarded-for": `198.51.100.${c + 1}` });
        if (r.status !== 200) bad++;
        else if (r.bytes > 200) hits++;
        times.push(r.ms);
      }
    }),
  );
  return { times, bad, hits };
}

/** Each kind of search through /api/search: one searcher, then {@link SEARCHERS} at once, on texts of its own each. */
export async function searchFigures(app: App, n: number): Promise<string[]> {
  // At rest first: the app's connections to the store opened and each kind's statements planned
  // once, with texts the measured ones do not repeat.
  for (const text of [
    "zzwarm",
    `${word(40)} ${word(41)}`,
    `${word(42).slice(0, 2)}x${word(42).slice(3)}`,
    word(19_999),
    "zzw",
    "blog.zz.example",
  ])
    await timed(app.port, `/api/search?q=${encodeURIComponent(text)}`);
  const lines: string[] = [];
  for (const [kind, texts] of Object.entries(searchTexts(n))) {
    const targets = texts.map((t) => `/api/search?q=${encodeURIComponent(t)}`);
    const one = await readAll(app.port, targets.slice(0, REQUESTS), 1);
    const eight = await readAll(app.port, targets.slice(REQUESTS), SEARCHERS);
    lines.push(
      `${kind.padEnd(12)} 1 searcher ${summary(one.times, one.bad)}; ${SEARCHERS} at once ${summary(eight.times, eight.bad)}` +
        ` (${REQUESTS} searches each, ${one.hits + eight.hits} of ${2 * REQUESTS} with hits)`,
    );
  }
  return lines;
}

/** The badge of entities spread over the index, the largest issuer's page, and sitemap files: p95 of each over HTTP. */
export async function pageFigures(app: App, n: number, sitemaps: string[]): Promise<string[]> {
  // Each badge an entity of its own: the app keeps a badge a minute.
  const badges = Array.from({ length: REQUESTS + 5 }, (_, i) => `/entity/${domainOf(spreadEntity(i, REQUESTS + 5, n))}/badge.svg`);
  const badge = await readAll(app.port, badges);
  const issuer = await readAll(
    app.port,
    Array.from({ length: REQUESTS + 5 }, () => "/issuer/guild.example"),
  );
  // The page after it, through the first page's own link: a cursor's statement is a range of the index.
  const firstPage = (await timed(app.port, "/issuer/guild.example", true)).body ?? "";
  const next = /<a href="(\/issuer\/guild\.example\?after=[A-Za-z0-9_-]+)" rel="next"/.exec(firstPage)?.[1];
  const second = await readAll(
    app.port,
    Array.from({ length: next ? REQUESTS + 5 : 0 }, () => next ?? ""),
  );
  const home = await readAll(
    app.port,
    Array.from({ length: REQUESTS + 5 }, () => "/"),
  );
  // Sitemap files spread over the index, each read whole, as often as needed for the sample.
  const files = Array.from(
    { length: Math.min(REQUESTS, Math.max(sitemaps.length, 1) * 3) + 2 },
    (_, i) => sitemaps[i % sitemaps.length] ?? "/sitemap.xml",
  );
  const maps = await readAll(app.port, files);
  const measured = (r: { times: number[]; bad: number }, skip: number) => summary(r.times.slice(skip), r.bad);
  return [
    `badge        /entity/{domain}/badge.svg, ${REQUESTS} entities: ${measured(badge, 5)} (goal p95 < 50 ms)`,
    `issuer       /issuer/guild.example, its ${Math.floor(n / 2).toLocaleString("en-US")} verified members (100 a page; the first kept whole by the page cache): ${measured(issuer, 5)} (goal p95 < 50 ms)`,
    `issuer p. 2  its second page, by the first's link, rendered each time: ${next ? measured(second, 5) : "no link to it"} (goal p95 < 50 ms)`,
    `home page    / over HTTP: ${measured(home, 5)} (goal p95 < 10 ms)`,
    `sitemap file ${files.length - 2} reads of ${sitemaps.length} files: ${measured(maps, 2)} (goal p95 < 50 ms)`,
  ];
}
