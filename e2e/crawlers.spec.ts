import { Readable } from "node:stream";
import { expect, test } from "./helpers/test";
import ogs from "open-graph-scraper";
import { PNG } from "pngjs";
import robotsParser from "robots-parser";
import { parseSitemap, parseSitemapIndex } from "sitemap";

/** IDENT_PUBLIC_URL in playwright.config.ts: what crawlers are told the pages' addresses are. */
const PUBLIC = "https://ident.example";
/** From an absolute public URL, the path this test server answers it at. */
const local = (url: string) => new URL(url).pathname;

test("robots.txt, read by robots-parser: entity and issuer pages allowed, the tools and the API not, the sitemap named", async ({
  request,
}) => {
  const answer = await request.get("/robots.txt");
  expect(answer.status()).toBe(200);
  expect(answer.headers()["content-type"]).toMatch(/^text\/plain/);
  expect(answer.headers()["x-content-type-options"]).toBe("nosniff");
  const robots = robotsParser(`${PUBLIC}/robots.txt`, await answer.text());
  expect(robots.isAllowed(`${PUBLIC}/entity/alice.example`, "Googlebot")).toBe(true);
  expect(robots.isAllowed(`${PUBLIC}/issuer/guild.example`, "Bingbot")).toBe(true);
  for (const p of ["/search?q=alice", "/check?q=alice.example", "/api/resolve?q=alice.example", "/recheck"])
    expect(robots.isAllowed(`${PUBLIC}${p}`, "Googlebot"), p).toBe(false);
  expect(robots.getSitemaps()).toEqual([`${PUBLIC}/sitemap.xml`]);
});

test("the sitemap index and its sitemaps, read by a sitemap parser, list the pages of accepted entities the index holds", async ({
  request,
}) => {
  // Looked up, so the index holds them: one accepted, one whose document is not there.
  expect((await request.get("/api/resolve?q=alice.example")).status()).toBe(200);
  await request.get("/api/resolve?q=nobody-home.test");
  const index = await request.get("/sitemap.xml");
  expect(index.status()).toBe(200);
  expect(index.headers()["content-type"]).toMatch(/^application\/xml/);
  const sitemaps = await parseSitemapIndex(Readable.from([await index.text()]));
  expect(sitemaps.map((s) => s.url)).toEqual([`${PUBLIC}/sitemaps/0.xml`]);
  const first = sitemaps[0];
  if (!first) throw new Error("no sitemap");
  const urls = await parseSitemap(Readable.from([await (await request.get(local(first.url))).text()]));
  const alice = urls.find((u) => u.url === `${PUBLIC}/entity/alice.example`);
  expect(alice?.lastmod).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(urls.some((u) => u.url.includes("nobody-home.test"))).toBe(false);
  expect((await request.get("/sitemaps/1.xml")).status()).toBe(404);
  expect((await request.get("/sitemaps/abc.xml")).status()).toBe(404);
});

test("a favicon at /favicon.ico and icons linked from every page; a browser loading pages logs no console error", async ({
  page,
  request,
}) => {
  const ico = await request.get("/favicon.ico");
  expect(ico.status()).toBe(200);
  // An icon directory (reserved 0, type 1) holding PNG images.
  const bytes = await ico.body();
  expect([...bytes.subarray(0, 4)]).toEqual([0, 0, 1, 0]);
  expect(
    bytes
      .subarray(6 + 16 * bytes.readUInt16LE(4))
      .subarray(1, 4)
      .toString("latin1"),
  ).toBe("PNG");
  const errors: string[] = [];
  page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
  page.on("pageerror", (e) => errors.push(e.message));
  for (const path of ["/", "/entity/alice.example", "/search?q=alice", "/reasons"]) {
    await page.goto(path);
    const icons = await page
      .locator('head link[rel~="icon"], head link[rel="apple-touch-icon"]')
      .evaluateAll((els) => els.map((e) => (e as HTMLLinkElement).href));
    expect(icons.length, path).toBeGreaterThanOrEqual(2);
    for (const href of icons) expect((await request.get(href)).status(), href).toBe(200);
  }
  expect(errors).toEqual([]);
});

test("a link preview (open-graph-scraper, as a chat app's bot) finds the entity's own image, which decodes as a 1200×630 PNG; other pages show the site image", async ({
  request,
}) => {
  const bot = { "user-agent": "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)" };
  // Looked up first, as a shared profile page is: its documents are cached.
  expect((await request.get("/api/resolve?q=alice.example")).status()).toBe(200);
  const html = await (await request.get("/entity/alice.example", { headers: bot })).text();
  const { result } = await ogs({ html });
  expect(result.twitterCard).toBe("summary_large_image");
  const [image] = result.ogImage ?? [];
  expect(image).toMatchObject({ url: `${PUBLIC}/entity/alice.example/preview.png`, width: "1200", height: "630" });
  expect(html).toMatch(/<meta property="og:image:alt" content="Alice Moreau[^"]*"/);
  const png = await request.get(local(image?.url ?? ""));
  expect(png.status()).toBe(200);
  expect(png.headers()["content-type"]).toBe("image/png");
  const decoded = PNG.sync.read(await png.body());
  expect([decoded.width, decoded.height]).toEqual([1200, 630]);
  // The home page and a search carry the plain site image.
  for (const path of ["/", "/search?q=alice"]) {
    const page = await ogs({ html: await (await request.get(path, { headers: bot })).text() });
    expect(page.result.ogImage?.[0]?.url, path).toBe(`${PUBLIC}/preview.png`);
  }
  const site = PNG.sync.read(await (await request.get("/preview.png")).body());
  expect([site.width, site.height]).toEqual([1200, 630]);
  // Never a fetch: an entity nobody looked up gets the site image, not a lookup.
  expect((await request.get("/entity/never-looked-up.test/preview.png")).status()).toBe(200);
  expect((await request.get("/entity/not a domain/preview.png")).status()).toBe(404);
});
