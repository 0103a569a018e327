/**
 * Search over the index on both engines (docs/decisions.md#search): accents, case, prefixes, a typo,
 * ranking, paging, hostile text, and the credentials an issuer has.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Claim, EntityResult } from "ident-resolver";
import { openStore, type IssuedPage, type Store } from "ident-resolver/store";
import { openDb, type Db, type Queryable, type StoreLocation } from "ident-resolver/store";
import { migrate, MIGRATIONS } from "ident-resolver/store";
import { reindexSearch } from "ident-resolver/store";
import { SEARCH_TIMEOUT_MS, searchIndex } from "ident-resolver/store";
import { decodeCursor, encodeCursor, parseSearchText, searchTerms } from "ident-resolver/store";
import { useEngines } from "../helpers/engines";

type Spec = {
  domain: string;
  name?: string;
  description?: string;
  status?: EntityResult["entity"]["status"];
  verified?: number;
  unverified?: number;
  properties?: { id: string; name: string }[];
  credentials?: { id: string; title: string; issuer: string; verified: boolean }[];
};

function entity(s: Spec): EntityResult {
  const status = s.status ?? "accepted";
  const prop = (i: number, verified: boolean): Claim => ({
    id: `§:property:p${i}.${s.domain}`,
    verified,
    ...(verified ? {} : { reason: "not_listed" as const }),
    claimed: { name: `Site ${i}` },
    problems: [],
  });
  const details: Record<string, string> = {};
  if (s.name) details.name = s.name;
  if (s.description) details.description = s.description;
  return {
    entity: { status, domain: s.domain, network_id: `§:entity:${s.domain}`, entity_type: "organization", details, problems: [] },
    properties:
      status !== "accepted"
        ? []
        : [
            ...Array.from({ length: s.verified ?? 0 }, (_, i) => prop(i, true)),
            ...Array.from({ length: s.unverified ?? 0 }, (_, i) => prop(100 + i, false)),
            ...(s.properties ?? []).map((p): Claim => ({ id: p.id, verified: true, claimed: { name: p.name }, problems: [] })),
          ],
    credentials: (s.credentials ?? []).map((c): Claim => ({
      id: c.id,
      verified: c.verified,
      ...(c.verified ? {} : { reason: "no_backlink" as const }),
      claimed: { title: c.title, property: { name: c.issuer } },
      problems: [],
    })),
    connections: [],
    jsonld: null,
    cache: { fetched_at: "2026-03-03T09:00:00.000Z", stale: false },
  };
}

const NETWORK: Spec[] = [
  {
    domain: "guild.example",
    name: "The Makers Guild",
    description: "A guild of furniture makers in Lyon.",
    verified: 3,
    properties: [{ id: "§:property:forum.guild.example", name: "Guild Forum" }],
  },
  { domain: "makersupply.test", name: "Makers Supply", description: "Tools and timber.", verified: 1, unverified: 2 },
  { domain: "guild-of-makers.test", name: "Guild of Makers", verified: 0, unverified: 1 },
  { domain: "makers-guild.test", name: "Makers Guild (copy)", status: "rejected" },
  { domain: "cafe.example", name: "Café Müller", description: "Kaffee und Kuchen in Zürich", verified: 1 },
  {
    domain: "alice.example",
    name: "Alice Moreau",
    description: "Furniture maker and writer.",
    verified: 1,
    properties: [{ id: "§:property:blog.alice.example", name: "Workshop Notes" }],
    credentials: [
      { id: "@alice@guild.example/members", title: "Member", issuer: "The Makers Guild", verified: true },
      { id: "@Alice@Guild.Example/teachers", title: "Teacher", issuer: "The Makers Guild", verified: false },
    ],
  },
  {
    domain: "bob.example",
    name: "Bob Okafor",
    credentials: [{ id: "@bob@guild.example/members", title: "Member", issuer: "The Makers Guild", verified: true }],
  },
  { domain: "zed.example", name: "Zed Weber", description: "mentions makers and guild in passing", verified: 5 },
  // Around alice.example (docs/decisions.md#search-at-size): two below it, two that only look alike.
  { domain: "shop.alice.example", name: "Moreau Shop" },
  { domain: "annex.shop.alice.example", name: "Moreau Shop Annex" },
  { domain: "xalice.example", name: "Xalice" },
  { domain: "alice.example.test", name: "Alice Elsewhere" },
  // One folding of text (docs/decisions.md#search): a name per letter family.
  { domain: "aero.example", name: "Ærøskøbing Færgeri" },
  { domain: "lodz.example", name: "Łódź Szkoła" },
  { domain: "strasse.example", name: "Hauptstraße Bäckerei" },
  { domain: "dordevic.example", name: "Đorđe Đorđević" },
  { domain: "isil.example", name: "Işıl Yıldız" },
  { domain: "nguyen.example", name: "Nguyễn Thị Ánh" },
  { domain: "odysseas.example", name: "Οδυσσέας Ελύτης" },
  { domain: "muhammad.example", name: "مُحَمَّد الخَطِيب" },
  { domain: "shalom.example", name: "שָׁלוֹם כֹּהֵן" },
  { domain: "fullwidth.example", name: "ＴＯＫＹＯ ﬁsh Ŀlibre" },
  ...Array.from({ length: 45 }, (_, i) => ({
    domain: `paging${String(i).padStart(2, "0")}.test`,
    name: `Paging Person ${i}`,
    verified: i % 3,
  })),
];

const { engines: ENGINES } = useEngines("search");

describe.each(ENGINES)("search on $name", ({ location }) => {
  let store: Store;
  let where: StoreLocation;
  beforeAll(async () => {
    where = await location();
    store = await openStore(where);
    for (const spec of NETWORK) await store.record(entity(spec));
  }, 60_000);
  afterAll(() => store?.close());

  const domains = async (text: string) => (await store.search(text))!.results.map((h) => h.domain);

  it("finds words as prefixes, whatever their case: 'mak guild' finds The Makers Guild", async () => {
    expect(await domains("mak guild")).toContain("guild.example");
    expect(await domains("MAKERS GUILD")).toContain("guild.example");
  });

  it("ignores accents both ways", async () => {
    expect(await domains("cafe muller")).toEqual(["cafe.example"]);
    expect(await domains("zürich")).toEqual(["cafe.example"]);
    expect(await domains("Zurich")).toEqual(["cafe.example"]);
  });

  it("forgives a one-letter typo in a name, on every page", async () => {
    const first = (await store.search("pagng person"))!;
    expect(first.results).toHaveLength(20);
    expect((await store.search("pagng person", first.next_cursor))!.results).toHaveLength(20);
    expect(await domains("Alise")).toContain("alice.example");
    expect(await domains("makers guld")).toContain("guild.example");
    expect(await domains("Moreua")).toContain("alice.example");
  });

  // One folding of text, the same when indexing and when searching (lib/store/search-text.ts): each family
  // found as written, without its marks, and in upper case.
  it.each([
    ["ø and æ", "aero.example", ["Ærøskøbing", "aeroskobing", "ÆRØ", "faergeri"]],
    ["ł", "lodz.example", ["Łódź", "lodz", "szkola", "SZKOŁA"]],
    ["ß", "strasse.example", ["Hauptstraße", "hauptstrasse", "HAUPTSTRASSE", "backerei"]],
    ["đ", "dordevic.example", ["Đorđević", "dordevic", "đorđe"]],
    ["ı and İ", "isil.example", ["Işıl", "isil", "IŞIL", "yildiz", "YILDIZ"]],
    ["letters with marks", "nguyen.example", ["Nguyễn", "nguyen", "thi anh", "NGUYỄN THỊ"]],
    ["Greek: tonos and final sigma", "odysseas.example", ["Οδυσσέας", "οδυσσεας", "ΟΔΥΣΣΕΑΣ", "ελυτης"]],
    ["Arabic vowel marks", "muhammad.example", ["مُحَمَّد", "محمد", "الخطيب"]],
    ["Hebrew points", "shalom.example", ["שָׁלוֹם", "שלום", "כהן"]],
    ["compatibility forms", "fullwidth.example", ["tokyo", "ＴＯＫＹＯ", "fish", "ﬁsh", "llibre"]],
  ])("folds %s the same both ways", async (_family, domain, typed) => {
    for (const text of typed) expect(await domains(text), text).toContain(domain);
  });

  it("searches property names, credential titles and issuer names, and descriptions", async () => {
    expect(await domains("workshop notes")).toEqual(["alice.example"]);
    expect(await domains("teacher")).toEqual(["alice.example"]);
    expect(await domains("timber")).toEqual(["makersupply.test"]);
  });

  it("ranks an exact domain first, then name matches, then the rest; accepted with more verified claims first among equals", async () => {
    const hits = await domains("makers guild");
    // Names with both words: accepted first, more verified first; then the rejected copy; then
    // the entity that only mentions them in its description (despite its 5 verified claims).
    expect(hits.slice(0, 3)).toEqual(["guild.example", "guild-of-makers.test", "makers-guild.test"]);
    expect(hits.indexOf("zed.example")).toBeGreaterThan(2);
    expect((await domains("guild-of-makers.test"))[0]).toBe("guild-of-makers.test");
    expect((await domains("§:entity:makers-guild.test"))[0]).toBe("makers-guild.test");
  });

  it("looks for a domain as a domain: itself, the domains above it, then those below it in the order of their reversed names; never its words", async () => {
    expect(await domains("alice.example")).toEqual(["alice.example", "shop.alice.example", "annex.shop.alice.example"]);
    expect(await domains("ALICE.example")).toEqual(["alice.example", "shop.alice.example", "annex.shop.alice.example"]);
    // A property's host finds its owner, above it; the blog's words ("blog", "alice", "example") find nothing more.
    expect(await domains("blog.alice.example")).toEqual(["alice.example"]);
    expect(await domains("annex.shop.alice.example")).toEqual(["annex.shop.alice.example", "shop.alice.example", "alice.example"]);
    // "example" is a word of most domains of the index: a domain no entity is at or above or below finds nothing.
    expect(await domains("nobody.example")).toEqual([]);
    // Words still search words.
    expect(await domains("moreau shop")).toEqual(["annex.shop.alice.example", "shop.alice.example"]);
  });

  it("a hit carries what the result page shows", async () => {
    const [hit] = (await store.search("cafe"))!.results;
    expect(hit).toEqual({
      domain: "cafe.example",
      network_id: "§:entity:cafe.example",
      entity_type: "organization",
      name: "Café Müller",
      description: "Kaffee und Kuchen in Zürich",
      status: "accepted",
      verified: 1,
      unverified: 0,
      last_checked_at: "2026-03-03T09:00:00.000Z",
      url: "/entity/cafe.example",
    });
  });

  it("pages 20 at a time with a cursor, ending with null", async () => {
    const first = (await store.search("paging person"))!;
    expect(first.results).toHaveLength(20);
    const second = (await store.search("paging person", first.next_cursor))!;
    const third = (await store.search("paging person", second.next_cursor))!;
    expect(second.results).toHaveLength(20);
    expect(third.results).toHaveLength(5);
    expect(third.next_cursor).toBeNull();
    const all = [...first.results, ...second.results, ...third.results].map((h) => h.domain);
    expect(new Set(all).size).toBe(45);
    // More verified claims first among equal names.
    const verified = [...first.results, ...second.results, ...third.results].map((h) => h.verified);
    expect(verified).toEqual([...verified].sort((a, b) => b - a));
    expect(await store.search("paging person", "not-a-cursor")).toBeNull();
  });

  it("hostile text returns results or none, never an error", async () => {
    const hostile = [
      "'; DROP TABLE entities; --",
      "%",
      "_",
      "\\",
      "a:* | b",
      "!(guild)",
      "guild & | !",
      "\"quoted\" 'single'",
      "😀".repeat(200),
      "ǅ̸̢̛͓̈́",
      "$1 $2 $$",
      "<script>alert(1)</script>",
      "guild\u202e",
      "x".repeat(200),
    ];
    for (const text of hostile) {
      expect(parseSearchText(text).ok, text).toBe(true);
      const page = await store.search(text);
      expect(Array.isArray(page?.results), text).toBe(true);
    }
    expect(await domains("guild")).toContain("guild.example"); // the table is still there
  });

  it("lists the credentials an issuer has, with each holder and whether it verifies", async () => {
    const issued = (await store.issuedBy("GUILD.example"))!;
    expect(issued.credentials.map((c) => [c.holder.domain, c.id, c.verified])).toEqual([
      ["alice.example", "@alice@guild.example/members", true],
      ["bob.example", "@bob@guild.example/members", true],
      ["alice.example", "@Alice@Guild.Example/teachers", false],
    ]);
    expect(issued.credentials[0]).toMatchObject({ title: "Member", holder: { name: "Alice Moreau", status: "accepted" } });
    expect(issued.next).toBeNull();
    expect(await store.issuedBy("nobody.example")).toEqual({ credentials: [], next: null });
  });

  it("pages an issuer's credentials a hundred at a time, each once, verified first, across the verdicts, ending with null", async () => {
    // 125 holders of two credentials each from big.test: 130 verified, 120 not.
    const holders = Array.from({ length: 125 }, (_, i) => `h${String(i).padStart(3, "0")}.holders.test`);
    for (const [i, domain] of holders.entries()) {
      const credentials = ["a", "b"].map((slot, j) => ({
        id: `@${slot}@big.test/${domain}`,
        title: "Badge",
        issuer: "Big",
        verified: (2 * i + j) % 25 < 13,
      }));
      await store.record(entity({ domain, name: `Holder ${i}`, credentials }));
    }
    const seen: [boolean, string, string | null][] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: IssuedPage = (await store.issuedBy("big.test", cursor))!;
      sizes.push(page.credentials.length);
      seen.push(...page.credentials.map((c): [boolean, string, string | null] => [c.verified, c.holder.domain, c.id]));
      cursor = page.next;
      if (cursor === null) break;
    }
    expect(sizes).toEqual([100, 100, 50]);
    const expected = holders
      .flatMap((domain, i) =>
        ["a", "b"].map((slot, j): [boolean, string, string | null] => [(2 * i + j) % 25 < 13, domain, `@${slot}@big.test/${domain}`]),
      )
      .sort((x, y) => Number(y[0]) - Number(x[0]) || x[1].localeCompare(y[1]) || x[2]!.localeCompare(y[2]!));
    expect(seen).toEqual(expected);
    expect(seen.filter(([verified]) => verified)).toHaveLength(130);
  });

  it("an issuer's page link that is not one reads nothing: null", async () => {
    const first = (await store.issuedBy("guild.example"))!;
    expect(first.credentials.length).toBeGreaterThan(0);
    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    for (const cursor of [
      "x",
      "!!!",
      "a".repeat(5000),
      forged([1, "not a domain", "k"]),
      forged([2, "alice.example", "k"]),
      forged({ after: 1 }),
      forged([1, "alice.example", ""]),
      forged([1, "alice.example", "a\u0000b"]),
      forged([1, "Alice.example", "k"]),
      forged([1, "alice.example", "K"]),
    ]) {
      expect(await store.issuedBy("guild.example", cursor), cursor.slice(0, 40)).toBeNull();
    }
    // A well-formed cursor past the end: an empty page, not an error.
    expect(await store.issuedBy("guild.example", forged([0, "zzz.example", "k"]))).toEqual({ credentials: [], next: null });
  });

  it("one search cannot hold the database: on a PostgreSQL server it is stopped after SEARCH_TIMEOUT_MS", async () => {
    if (store.engine !== "postgres") return expect(store.engine).toBe("pglite"); // PGlite has no statement timer (docs/decisions.md#search)
    // Another session holds the table: the search waits on it, and its timeout ends the wait.
    const holder = await openDb(where);
    try {
      const released = holder.transaction(async (tx) => {
        await tx.query("LOCK TABLE entities IN ACCESS EXCLUSIVE MODE");
        await new Promise((r) => setTimeout(r, SEARCH_TIMEOUT_MS + 3000));
      });
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      await expect(searchIndex(store.db, "alice")).rejects.toMatchObject({ code: "57014" });
      expect(Date.now() - started).toBeLessThan(SEARCH_TIMEOUT_MS + 2500);
      await released;
    } finally {
      await holder.close();
    }
  }, 20_000);
});

it.each(ENGINES)("entities recorded before search existed are found after the migration ($name)", async ({ empty }) => {
  const db = await openDb(await empty("v1search"));
  try {
    await migrate(
      db,
      MIGRATIONS.filter((m) => m.version === 1),
    );
    await db.query(
      `INSERT INTO entities (domain, status, details, first_seen_at, last_checked_at) VALUES ('old.example', 'accepted', '{"name": "Élodie Bjørnsdóttir"}', now(), now())`,
    );
    await db.query(
      `INSERT INTO claims (domain, kind, claim_key, id, present, verified, first_seen_at, last_checked_at)
       VALUES ('old.example', 'credentials', 'k', '@elodie@Issuer.Example/members', true, true, now(), now())`,
    );
    await migrate(db);
    expect((await searchIndex(db, "elodie")).results.map((h) => [h.domain, h.name])).toEqual([["old.example", "Élodie Bjørnsdóttir"]]);
    // Folded as a search folds (migration 7): "ø" typed is the "o" stored.
    expect((await searchIndex(db, "Bjørnsdóttir")).results.map((h) => h.domain)).toEqual(["old.example"]);
    // The words of its name were gathered too: a typo finds it.
    expect((await searchIndex(db, "elodei")).results.map((h) => h.domain)).toEqual(["old.example"]);
    expect(await db.query("SELECT issuer FROM claims")).toEqual([{ issuer: "issuer.example" }]);
  } finally {
    await db.close();
  }
});

describe.each(ENGINES)("a common word on $name", ({ location }) => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb(await location("common"));
    await migrate(db);
    // 1,500 "Filler" entities ranked first, then 4,100 "Common" ones (some rejected, fewer verified
    // claims): each word in more entities than a search reads and sorts (docs/decisions.md#search-at-size).
    await db.query(
      `INSERT INTO entities (domain, status, details, name, verified, unverified, first_seen_at, last_checked_at)
       SELECT 'f' || i || '.example', 'accepted', '{}', 'Filler ' || i, 5, 0, now(), now() FROM generate_series(1, 1500) AS i`,
    );
    await db.query(
      `INSERT INTO entities (domain, status, details, name, verified, unverified, first_seen_at, last_checked_at)
       SELECT 'c' || i || '.example', CASE WHEN i % 4 = 0 THEN 'rejected' ELSE 'accepted' END, '{}', 'Common ' || i, i % 3, 0, now(), now()
       FROM generate_series(1, 4100) AS i`,
    );
    await db.transaction(reindexSearch);
    await db.query("ANALYZE entities");
  }, 60_000);
  afterAll(() => db?.close());

  /** Every entity whose name starts with `word`, in rank order, as a full sort gives it. */
  const expected = async (word = "Common") =>
    (
      await db.query<{ domain: string }>(
        "SELECT domain FROM entities WHERE name LIKE $1 || '%' ORDER BY (status = 'accepted') DESC, verified DESC, domain",
        [word],
      )
    ).map((r) => r.domain);
  /** How often the entities have been read in rank order (entities_by_rank), from the engine's statistics. */
  const walks = async () => {
    await db.query("SELECT pg_stat_force_next_flush()");
    await db.query("SELECT pg_stat_clear_snapshot()");
    const [row] = await db.query<{ n: string }>("SELECT idx_scan AS n FROM pg_stat_user_indexes WHERE indexrelname = 'entities_by_rank'");
    return Number(row?.n);
  };
  /** A search on a server, whose connection sends its statistics as soon as it is done (the engine's own sends them as it goes). */
  const search = async (text: string, offset = 0) => {
    if (db.engine !== "postgres") return searchIndex(db, text, offset);
    const flushing: Db = Object.assign({}, db, {
      transaction: <T>(body: (tx: Queryable) => Promise<T>) =>
        db.transaction(async (tx) => {
          const out = await body(tx);
          await tx.query("SELECT pg_stat_force_next_flush()");
          return out;
        }),
    });
    const out = await searchIndex(flushing, text, offset);
    await new Promise((r) => setTimeout(r, 300));
    return out;
  };

  it("is read in rank order and stops after its page: the same hits, in the same order, as sorting every match", async () => {
    // Where the word is at the top of the order, the walk fills the page at once.
    let before = await walks();
    expect((await search("filler")).results.map((h) => h.domain)).toEqual((await expected("Filler")).slice(0, 20));
    expect(await walks()).toBeGreaterThan(before);
    // Below 1,500 entities without it, and in more than are read and sorted: the walk goes on.
    before = await walks();
    const first = await search("common");
    const second = await search("Common", 20);
    expect([...first.results, ...second.results].map((h) => h.domain)).toEqual((await expected()).slice(0, 40));
    expect(first.cut_short).toBeUndefined();
    expect(await walks()).toBeGreaterThan(before);
    expect((await search("comm")).results.map((h) => h.domain)).toEqual((await expected()).slice(0, 20));
    // Rare: read through the text index and sorted, never walked.
    const walked = await walks();
    expect((await search("filler 7")).results.map((h) => h.domain)).toContain("f7.example");
    expect(await walks()).toBe(walked);
  });

  it("a walk that reads its limit without filling its page stops there and says so", async () => {
    // 1,500 entities without the word, then 10 with it, then the limit.
    const cut = await searchIndex(db, "common", 0, { walkLimit: 1510 });
    expect(cut.cut_short).toBe(true);
    // What it found is the start of the true order.
    expect(cut.results.map((h) => h.domain)).toEqual((await expected()).slice(0, cut.results.length));
    expect(cut.results).toHaveLength(10);
  });
});

describe("the typo lookup on the embedded engine", () => {
  it("goes through the trigram index for long words too, never reading every word of the index", async () => {
    const store = await openStore({ kind: "embedded", dataDir: null });
    try {
      // 4,096 words of names made of syllables, as a grown index has: on these the planner would
      // rather compute the similarity of every word than read the trigram index.
      await store.db.query(`INSERT INTO search_words (word)
        SELECT s[1 + i % 8] || s[1 + (i / 8) % 8] || s[1 + (i / 64) % 8] || s[1 + (i / 512) % 8]
        FROM generate_series(0, 4095) AS i, (SELECT array['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'von'] AS s) AS syllables`);
      await store.db.query("ANALYZE search_words");
      /** Whole scans of search_words so far, from the engine's statistics (its one backend's, flushed now). */
      const wholeScans = async () => {
        await store.db.query("SELECT pg_stat_force_next_flush()");
        await store.db.query("SELECT pg_stat_clear_snapshot()");
        const [row] = await store.db.query<{ n: string }>("SELECT seq_scan AS n FROM pg_stat_user_tables WHERE relname = 'search_words'");
        return Number(row?.n);
      };
      const before = await wholeScans();
      // Nothing has these words, so each is looked up among the words of names.
      expect((await store.search("kalominevon foundation internationale"))!.results).toEqual([]);
      expect((await store.search("kalominevo"))!.results).toEqual([]);
      expect(await wholeScans()).toBe(before);
    } finally {
      await store.close();
    }
  });
});

describe("search text and cursors", () => {
  it("refuses empty text, more than 200 characters and control characters", () => {
    expect(parseSearchText("  ")).toMatchObject({ ok: false, message: "The search is empty" });
    expect(parseSearchText("x".repeat(201)).ok).toBe(false);
    expect(parseSearchText("😀".repeat(200)).ok).toBe(true);
    expect(parseSearchText("a\u0000b").ok).toBe(false);
    expect(parseSearchText("a\nb").ok).toBe(false);
  });

  it("folds words to the index's form", () => {
    expect(searchTerms("Café  MÜLLER, café!")).toEqual(["cafe", "muller"]);
    expect(searchTerms("'; DROP --")).toEqual(["drop"]);
    expect(searchTerms("😀")).toEqual([]);
    expect(searchTerms("Bjørn Ærøskøbing Łódź Straße Đorđe Işıl")).toEqual(["bjorn", "aeroskobing", "lodz", "strasse", "dorde", "isil"]);
  });

  it("a cursor is opaque and checked", () => {
    expect(decodeCursor(encodeCursor(40))).toBe(40);
    expect(decodeCursor(null)).toBe(0);
    expect(decodeCursor(encodeCursor(7))).toBeNull();
    expect(decodeCursor(encodeCursor(100_000))).toBeNull();
    expect(decodeCursor("'; --")).toBeNull();
  });
});
