/**
 * Every change read once, in the order it was recorded (docs/api.md#changes, docs/decisions.md#the-order-of-changes),
 * on both engines: walkers of `/api/changes?limit=1` and of `/changes.xml`'s `next` links see every change
 * exactly once, a claim of 1,100 or 10,000 characters among them; a slow check, fetched before a faster
 * one and recorded after it, is missed neither by a walker of the API who passed the faster one nor by
 * a feed reader; on PostgreSQL, two recordings at once, the one that wrote first committing last;
 * hand-made cursors refused 400 before any read, with nothing logged; a pruned change's cursor;
 * migration 10 from version 9; cursors kept through an export and import both ways, and a merge that
 * places the file's changes after the store's newest.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "ident-resolver/setup";
import type { Claim, EntityResult } from "ident-resolver";
import { openDb, type Tx } from "ident-resolver/store";
import { openStore, type Store, type StoreLocation } from "ident-resolver/store";
import { exportIndex, importIndex, type NumberedLine } from "ident-resolver/store";
import { changeId } from "ident-resolver/store";
import { migrate, MIGRATIONS } from "ident-resolver/store";
import { Changes } from "ident-resolver/store";
import { record } from "ident-resolver/store";
import { createWindows, trafficSettings } from "ident-resolver/traffic";
import { createSearchGate } from "ident-resolver/traffic";
import { createApi, type ApiDeps } from "../../web/api";
import { answerChangesFeed } from "../../web/feed-routes";
import { apiGet } from "../helpers/api-request";
import { useEngines } from "../helpers/engines";

const HOUR = 3600_000;
const T0 = Date.parse("2026-05-01T08:00:00.000Z");
const at = (hours: number) => new Date(T0 + hours * HOUR).toISOString();
const ORIGIN = "https://resolver.example";
/** Claims of these lengths: the publisher of the 1,100-character connection URL, and 10,000. */
const longUrl = (n: number) => `https://long.example/${"abcdefghij".repeat(n).slice(0, n - 21)}`;

type Spec = { id: string; verified: boolean; reason?: Claim["reason"] };
function result(domain: string, when: string, claims: Spec[], status: EntityResult["entity"]["status"] = "accepted"): EntityResult {
  const claim = (c: Spec): Claim => ({
    id: c.id,
    verified: c.verified,
    ...(c.verified ? {} : { reason: c.reason ?? ("not_listed" as const) }),
    claimed: { id: c.id },
    problems: [],
  });
  const accepted = status === "accepted";
  return {
    entity: accepted
      ? { status, domain, network_id: `§:entity:${domain}`, details: { name: domain }, problems: [] }
      : { status, domain, problems: [] },
    properties: [],
    credentials: accepted ? claims.filter((c) => c.id.startsWith("@")).map(claim) : [],
    connections: accepted ? claims.filter((c) => c.id.startsWith("https://")).map(claim) : [],
    jsonld: null,
    cache: { fetched_at: when, stale: false },
  };
}
const member = (domain: string, verified: boolean, reason?: Claim["reason"]): Spec => ({
  id: `@${domain.split(".")[0]}@guild.example/members`,
  verified,
  reason,
});

/** The ids of every change the store holds, from its rows. */
async function heldIds(store: Store): Promise<string[]> {
  const rows = await store.db.query<{ domain: string; kind: "entity"; claim_key: string; at: Date }>(
    "SELECT domain, kind, claim_key, at FROM changes",
  );
  return rows.map((r) => changeId({ domain: r.domain, kind: r.kind, claim_key: r.claim_key, at: r.at.toISOString() })).sort();
}

type Walk = { ids: string[]; cursor: string | null; statuses: number[]; longest: number };

/** The API and the Atom route over `store`, with what they log. */
function routesOf(store: Store) {
  const logged: string[] = [];
  const settings = trafficSettings({ searches: 1_000_000 });
  const deps = {
    resolver: {
      store: Promise.resolve(store),
      traffic: { settings, windows: createWindows(settings), searches: createSearchGate({ atOnce: 4, waiting: 16, perClient: 2 }) },
      metrics: { refusals: { inc: () => undefined } },
    } as unknown as ApiDeps["resolver"],
    clientOf: () => "203.0.113.9",
    log: createLogger("warn", (line) => void logged.push(line)),
  };
  const api = createApi(deps);
  const app = Object.assign({}, deps, { config: { publicUrl: ORIGIN } }) as unknown as Parameters<typeof answerChangesFeed>[0];
  const changes = async (params: Record<string, string>) => {
    const reply = await api.answer(apiGet("/api/changes", params));
    return { status: reply.status, body: JSON.parse((reply.body ?? Buffer.from("null")).toString("utf8")) as unknown };
  };
  const feed = (query: string) => answerChangesFeed(app, new Request(`${ORIGIN}/changes.xml${query}`));
  return { logged, changes, feed };
}
type Routes = ReturnType<typeof routesOf>;

/** Polls `/api/changes?limit=` from `walk.cursor` until a page reaches the latest; adds what it sees to `walk`. */
async function poll(routes: Routes, walk: Walk, limit = 1): Promise<void> {
  for (let pages = 0; pages < 10_000; pages++) {
    const answer = await routes.changes({ limit: String(limit), ...(walk.cursor === null ? {} : { after: walk.cursor }) });
    walk.statuses.push(answer.status);
    if (answer.status !== 200) return;
    const page = Changes.parse(answer.body);
    walk.ids.push(...page.changes.map((c) => c.id));
    for (const c of page.changes) walk.longest = Math.max(walk.longest, c.cursor.length);
    walk.cursor = page.changes.at(-1)?.cursor ?? walk.cursor;
    if (page.next_cursor === null) return;
  }
  throw new Error("more than 10,000 pages");
}
const newWalk = (): Walk => ({ ids: [], cursor: null, statuses: [], longest: 0 });

/** Follows `/changes.xml`'s `next` links from the first page to the last: every entry's id, and each page's status. */
async function followFeed(routes: Routes): Promise<{ ids: string[]; statuses: number[] }> {
  const ids: string[] = [];
  const statuses: number[] = [];
  let query: string | null = "";
  for (let pages = 0; query !== null && pages < 1000; pages++) {
    const response = await routes.feed(query);
    statuses.push(response.status);
    if (response.status !== 200) break;
    const body = await response.text();
    ids.push(...[...body.matchAll(/<entry>\s*<id>([^<]+)<\/id>/g)].map((m) => m[1] ?? ""));
    const next = /<link rel="next" type="application\/atom\+xml" href="([^"]+)"/.exec(body)?.[1]?.replaceAll("&amp;", "&");
    query = next === undefined ? null : new URL(next).search;
  }
  return { ids, statuses };
}

/**
 * Reads `/changes.xml` as a feed reader polls it (RFC 5005 §3): from the first page, following `next`,
 * until an entry it has read before; adds the new ones to `read`, newest first.
 */
async function pollFeed(routes: Routes, read: string[]): Promise<void> {
  const known = new Set(read);
  let query: string | null = "";
  for (let pages = 0; query !== null && pages < 1000; pages++) {
    const body = await (await routes.feed(query)).text();
    for (const [, id = ""] of body.matchAll(/<entry>\s*<id>([^<]+)<\/id>/g)) {
      if (known.has(id)) return;
      read.push(id);
    }
    const next = /<link rel="next" type="application\/atom\+xml" href="([^"]+)"/.exec(body)?.[1]?.replaceAll("&amp;", "&");
    query = next === undefined ? null : new URL(next).search;
  }
}

const sorted = (ids: string[]) => [...ids].sort();
const twice = (ids: string[]) => ids.length - new Set(ids).size;

/**
 * An index of 30 entities with turns of verdict, two whose connections' URLs are 1,100 and 10,000
 * characters long, and 49 changes after the longer one: its change is the last entry of the first
 * page of /changes.xml, whose `next` link starts after it.
 */
async function fill(store: Store): Promise<void> {
  for (let i = 0; i < 30; i++) {
    const d = `m${String(i).padStart(2, "0")}.example`;
    await store.record(result(d, at(i), [member(d, true)]));
    await store.record(result(d, at(i + 0.5), [member(d, false)]));
  }
  await store.record(result("long.example", at(31), [{ id: longUrl(1100), verified: false, reason: "no_backlink" }]));
  await store.record(result("longer.example", at(31.5), []));
  await store.record(result("longer.example", at(32), [{ id: longUrl(10_000), verified: false, reason: "no_backlink" }]));
  for (let i = 0; i < 24; i++) {
    const d = `a${String(i).padStart(2, "0")}.example`;
    await store.record(result(d, at(33 + i / 100), [member(d, true)]));
  }
  await store.record(result("a00.example", at(34), [member("a00.example", false)]));
}

const { engines: ENGINES } = useEngines("positions");

describe.each(ENGINES)("every change once, in the order recorded, on $name", ({ location }) => {
  let store: Store;
  let routes: Routes;
  beforeAll(async () => {
    store = await openStore(await location());
    await fill(store);
    routes = routesOf(store);
  }, 120_000);
  afterAll(() => store.close());

  it("a walker of /api/changes?limit=1 sees every change exactly once, past claims of 1,100 and 10,000 characters, each cursor short", async () => {
    const walk = newWalk();
    await poll(routes, walk);
    expect(walk.statuses.every((s) => s === 200)).toBe(true);
    expect(twice(walk.ids)).toBe(0);
    expect(sorted(walk.ids)).toEqual(await heldIds(store));
    expect(walk.longest).toBeLessThanOrEqual(24);
  });

  it("a walker following /changes.xml's next links from the newest sees every change exactly once, newest first", async () => {
    const followed = await followFeed(routes);
    expect(followed.statuses.every((s) => s === 200)).toBe(true);
    expect(twice(followed.ids)).toBe(0);
    expect(sorted(followed.ids)).toEqual(await heldIds(store));
    const walk = newWalk();
    await poll(routes, walk, 200);
    expect(followed.ids).toEqual([...walk.ids].reverse());
  });

  it("a slow check, fetched before a faster one and recorded after it, is not missed by a walker who passed the faster one, nor by a feed reader", async () => {
    const walk = newWalk();
    const read: string[] = [];
    const both = () => Promise.all([poll(routes, walk, 50), pollFeed(routes, read)]);
    await both();
    // The fast check of fast.example, fetched at 41 h, is recorded and read; the slow one, fetched at 40 h, after it.
    await store.record(result("fast.example", at(41), [member("fast.example", true)]));
    await both();
    await store.record(result("slow.example", at(40), [member("slow.example", true)]));
    await both();
    expect(twice(walk.ids)).toBe(0);
    expect(sorted(walk.ids)).toEqual(await heldIds(store));
    expect(twice(read)).toBe(0);
    expect(sorted(read)).toEqual(await heldIds(store));
    const slow = walk.ids.slice(-2);
    expect(slow).toContain(changeId({ domain: "slow.example", kind: "entity", claim_key: "", at: at(40) }));
  });

  it("hand-made cursors are refused 400 invalid_query before any read, and nothing is logged: NUL, garbage, past the newest, an older form naming nothing held", async () => {
    const oldForm = (tuple: unknown[]) => Buffer.from(JSON.stringify(tuple)).toString("base64url");
    const bad = [
      "p1\u0000",
      "\u0000",
      oldForm([at(1), "m01.example\u0000", "entity", ""]),
      oldForm([at(1), "m01.example", "credentials", "@m01@guild.example/members\u0000"]),
      oldForm(["0000-01-01T00:00:00.000Z", "m01.example", "entity", ""]),
      oldForm([at(1), "m01.example", "credentials", "@m01@guild.example/\ud800"]),
      oldForm([at(1), "nobody.example", "entity", ""]),
      "bogus",
      "%%%",
      "p0",
      "p007",
      "p99999999",
      "p99999999999999999999999",
      "a".repeat(3000),
    ];
    for (const cursor of bad) {
      const answer = await routes.changes({ after: cursor });
      expect(answer.status, JSON.stringify(cursor)).toBe(400);
      expect((answer.body as { error: { code: string } }).error.code).toBe("invalid_query");
      expect((await routes.feed(`?before=${encodeURIComponent(cursor)}`)).status, JSON.stringify(cursor)).toBe(400);
    }
    expect(routes.logged).toEqual([]);
  });

  it("a cursor of the older form naming a change the index holds continues just after it", async () => {
    const all = newWalk();
    await poll(routes, all, 200);
    const [row] = await store.db.query<{ at: Date; domain: string; kind: string; claim_key: string }>(
      "SELECT at, domain, kind, claim_key FROM changes WHERE domain = 'm05.example' AND kind = 'entity'",
    );
    if (!row) throw new Error("no change of m05.example");
    const cursor = Buffer.from(JSON.stringify([row.at.toISOString(), row.domain, row.kind, row.claim_key])).toString("base64url");
    const answer = await routes.changes({ after: cursor, limit: "3" });
    expect(answer.status).toBe(200);
    const id = changeId({ domain: row.domain, kind: "entity", claim_key: row.claim_key, at: row.at.toISOString() });
    const i = all.ids.indexOf(id);
    expect(Changes.parse(answer.body).changes.map((c) => c.id)).toEqual(all.ids.slice(i + 1, i + 4));
  });

  it("a change an older release wrote without a position (a fleet mid-upgrade) is placed by the next recording, and read once", async () => {
    const walk = newWalk();
    await poll(routes, walk, 200);
    await store.db.query("INSERT INTO changes (domain, kind, claim_key, at, status) VALUES ('m07.example', 'entity', '', $1, 'rejected')", [
      at(44),
    ]);
    await poll(routes, walk, 200);
    await store.record(result("upgrade.example", at(45), [member("upgrade.example", true)]));
    await poll(routes, walk, 200);
    expect(twice(walk.ids)).toBe(0);
    expect(sorted(walk.ids)).toEqual(await heldIds(store));
    expect(walk.ids.slice(-3)[0]).toBe(changeId({ domain: "m07.example", kind: "entity", claim_key: "", at: at(44) }));
  });

  it("the cursor of a change the index has since pruned still works", async () => {
    await store.record(result("nobody-here.example", at(42), [], "not_found"));
    const walk = newWalk();
    await poll(routes, walk, 200);
    const cursor = walk.cursor;
    expect(walk.ids.at(-1)).toBe(changeId({ domain: "nobody-here.example", kind: "entity", claim_key: "", at: at(42) }));
    expect(await store.prune(new Date(Date.parse(at(42)) + 8 * 24 * HOUR))).toBe(1);
    expect((await routes.changes({ after: cursor ?? "" })).status).toBe(200);
    await store.record(result("fast.example", at(43), [member("fast.example", false)]));
    await poll(routes, walk, 200);
    expect(twice(walk.ids)).toBe(0);
    expect(walk.ids.at(-1)).toBe(
      changeId({ domain: "fast.example", kind: "credentials", claim_key: "@fast@guild.example/members", at: at(43) }),
    );
  });
});

describe("two recordings at once on PostgreSQL", () => {
  const postgres = ENGINES.find((e) => e.name === "PostgreSQL");
  let store: Store;
  let routes: Routes;
  beforeAll(async () => {
    if (!postgres) throw new Error("no PostgreSQL engine");
    store = await openStore(await postgres.location("positionsconcurrent"));
    routes = routesOf(store);
  }, 60_000);
  afterAll(() => store.close());

  /** A transaction that does `before`, waits for `release`, then `after`; `ready` once `before` is done. */
  function held(before: (tx: Tx) => Promise<unknown>, after = before) {
    let release!: () => void;
    let ready!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const isReady = new Promise<void>((r) => (ready = r));
    const done = store.db.transaction(async (tx) => {
      await before(tx);
      ready();
      await released;
      if (after !== before) await after(tx);
    });
    return { release, ready: isReady, done };
  }

  it("the one that wrote its changes first commits last: a walker who read meanwhile misses neither", async () => {
    for (const d of ["one.example", "two.example"]) await store.record(result(d, at(0), [member(d, false)]));
    const walk = newWalk();
    await poll(routes, walk, 50);
    // one.example's check (fetched at 1 h) writes its changes and holds its transaction open.
    const first = held((tx) => record(tx, result("one.example", at(1), [member("one.example", false, "not_found")])));
    await first.ready;
    // two.example's (fetched at 2 h) is recorded meanwhile, on another connection.
    const second = store.db.transaction((tx) => record(tx, result("two.example", at(2), [member("two.example", false, "not_found")])));
    await Promise.race([second, new Promise((r) => setTimeout(r, 1000))]);
    await poll(routes, walk, 50);
    first.release();
    await Promise.all([first.done, second]);
    await poll(routes, walk, 50);
    expect(twice(walk.ids)).toBe(0);
    expect(sorted(walk.ids)).toEqual(await heldIds(store));
  });

  it("the one that began first records last: a walker who read the other's change meanwhile still sees it", async () => {
    const walk = newWalk();
    await poll(routes, walk, 50);
    // one.example's transaction begins (its entity locked), and records only once two.example's is read.
    const first = held(
      (tx) => tx.query("SELECT 1 FROM entities WHERE domain = 'one.example' FOR UPDATE"),
      (tx) => record(tx, result("one.example", at(3), [member("one.example", false, "not_listed")])),
    );
    await first.ready;
    await store.db.transaction((tx) => record(tx, result("two.example", at(4), [member("two.example", false, "not_listed")])));
    await poll(routes, walk, 50);
    first.release();
    await first.done;
    await poll(routes, walk, 50);
    expect(twice(walk.ids)).toBe(0);
    expect(sorted(walk.ids)).toEqual(await heldIds(store));
  });
  it("on a server whose transactions default to repeatable read, two recordings at once both land, each change read once", async () => {
    const location = await postgres!.location("positionsrr");
    const setUp = await openStore(location);
    const [named] = await setUp.db.query<{ name: string }>("SELECT current_database() AS name");
    await setUp.db.query(`ALTER DATABASE "${named?.name}" SET default_transaction_isolation = 'repeatable read'`);
    await setUp.close();
    const rr = await openStore(location);
    try {
      const [level] = await rr.db.query<{ default_transaction_isolation: string }>("SHOW default_transaction_isolation");
      expect(level?.default_transaction_isolation).toBe("repeatable read");
      const rrRoutes = routesOf(rr);
      const walk = newWalk();
      let release!: () => void;
      let wrote!: () => void;
      const released = new Promise<void>((r) => (release = r));
      const written = new Promise<void>((r) => (wrote = r));
      // one.example's recording holds the counter; two.example's waits for it, then reads the counter it moved.
      const first = rr.db.transaction(async (tx) => {
        await record(tx, result("one.example", at(1), [member("one.example", false)]));
        wrote();
        await released;
      });
      await written;
      const second = rr.db.transaction((tx) => record(tx, result("two.example", at(2), [member("two.example", false)])));
      await new Promise((r) => setTimeout(r, 300));
      release();
      await expect(Promise.all([first, second])).resolves.toBeDefined();
      await poll(rrRoutes, walk, 50);
      expect(twice(walk.ids)).toBe(0);
      expect(sorted(walk.ids)).toEqual(await heldIds(rr));
      expect(walk.ids).toHaveLength(4);
    } finally {
      await rr.close();
    }
  });

  it("a recording that deletes an older release's unplaced change while another holds the counter: no deadlock, both recorded, each change read once", async () => {
    for (const d of ["one.example", "two.example"]) await store.record(result(d, at(0), [member(d, false)]));
    const walk = newWalk();
    await poll(routes, walk, 50);
    await store.db.query("INSERT INTO changes (domain, kind, claim_key, at, status) VALUES ('one.example', 'entity', '', $1, 'rejected')", [
      at(5),
    ]);
    // A recording that prunes one.example's changes (as one of 500 new changes does) holds its unplaced row ...
    const pruning = held(
      (tx) => tx.query("DELETE FROM changes WHERE domain = 'one.example' AND position IS NULL"),
      (tx) => record(tx, result("one.example", at(6), [member("one.example", true)])),
    );
    await pruning.ready;
    // ... while another takes the counter and places the unplaced changes: it leaves the held row to its holder.
    const other = store.db.transaction((tx) => record(tx, result("two.example", at(7), [member("two.example", true)])));
    await Promise.race([other, new Promise((r) => setTimeout(r, 300))]);
    pruning.release();
    await expect(Promise.all([pruning.done, other])).resolves.toBeDefined();
    await poll(routes, walk, 50);
    expect(twice(walk.ids)).toBe(0);
    expect(sorted(walk.ids)).toEqual(await heldIds(store));
  });
});

describe.each(ENGINES)("migration 10 on $name", ({ empty }) => {
  it("from version 9, numbers the changes in the order the feed had (time, entity, kind, claim): an older cursor continues where it was", async () => {
    const where: StoreLocation = await empty("positionsmigration");
    const db = await openDb(where);
    try {
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < 10),
      );
      await db.query(
        `INSERT INTO entities (domain, status, first_seen_at, last_checked_at) VALUES ('a.example', 'accepted', $1, $1), ('b.example', 'accepted', $1, $1)`,
        [at(0)],
      );
      // Inserted out of time order: b's at 2 h first, then a's at 1 h, then a's claims at 3 h.
      const rows: [string, string, string, string][] = [
        ["b.example", "entity", "", at(2)],
        ["a.example", "entity", "", at(1)],
        ["a.example", "properties", "§:property:x.example", at(3)],
        ["a.example", "credentials", "@a@guild.example/members", at(3)],
      ];
      for (const [d, kind, key, when] of rows)
        await db.query("INSERT INTO changes (domain, kind, claim_key, at, verified) VALUES ($1, $2, $3, $4, true)", [d, kind, key, when]);
      await migrate(db);
      const numbered = await db.query<{ domain: string; kind: string; position: string }>(
        "SELECT domain, kind, position::text AS position FROM changes ORDER BY position",
      );
      expect(numbered.map((r) => [r.domain, r.kind, r.position])).toEqual([
        ["a.example", "entity", "1"],
        ["b.example", "entity", "2"],
        ["a.example", "credentials", "3"],
        ["a.example", "properties", "4"],
      ]);
      expect(await db.query<{ last: string }>("SELECT last::text AS last FROM change_positions")).toEqual([{ last: "4" }]);
    } finally {
      await db.close();
    }
    const store = await openStore(where);
    try {
      const routes = routesOf(store);
      const older = Buffer.from(JSON.stringify([at(2), "b.example", "entity", ""])).toString("base64url");
      const answer = await routes.changes({ after: older });
      expect(answer.status).toBe(200);
      expect(Changes.parse(answer.body).changes.map((c) => [c.domain, c.kind])).toEqual([
        ["a.example", "credentials"],
        ["a.example", "properties"],
      ]);
    } finally {
      await store.close();
    }
  }, 120_000);
});

async function exported(store: Store): Promise<string> {
  let text = "";
  await exportIndex(store.db, (line) => void (text += line));
  return text;
}
async function* linesOf(text: string): AsyncGenerator<NumberedLine> {
  let n = 0;
  for (const line of text.split("\n").filter(Boolean)) yield { n: ++n, text: line };
}

describe("cursors through an export and import", () => {
  const [pglite, postgres] = [ENGINES.find((e) => e.name === "PGlite"), ENGINES.find((e) => e.name === "PostgreSQL")];
  const stores: Store[] = [];
  afterAll(() => Promise.all(stores.map((s) => s.close())));
  const fresh = async (where: StoreLocation) => {
    const s = await openStore(where);
    stores.push(s);
    return s;
  };

  it("a walker's cursor, handed out by the embedded store, goes on where it was on PostgreSQL and back, the newest change pruned", async () => {
    if (!pglite || !postgres) throw new Error("no engines");
    const embedded = await fresh(await pglite.location());
    await fill(embedded);
    await embedded.record(result("gone.example", at(34), [], "not_found"));
    const walk = newWalk();
    await poll(routesOf(embedded), walk);
    // The walker stopped at the newest change, which the prune then removes.
    expect(await embedded.prune(new Date(Date.parse(at(34)) + 8 * 24 * HOUR))).toBe(1);
    const server = await fresh(await postgres.location("positionsmoved"));
    await importIndex(server.db, linesOf(await exported(embedded)), { merge: false });
    await server.record(result("m00.example", at(50), [member("m00.example", true)]));
    const back = await fresh(await pglite.location());
    await importIndex(back.db, linesOf(await exported(server)), { merge: false });
    expect(await exported(back)).toBe(await exported(server));
    for (const moved of [server, back]) {
      const onward: Walk = Object.assign(newWalk(), { cursor: walk.cursor });
      await poll(routesOf(moved), onward);
      expect(onward.statuses.every((s) => s === 200)).toBe(true);
      expect(onward.ids).toEqual([
        changeId({ domain: "m00.example", kind: "credentials", claim_key: "@m00@guild.example/members", at: at(50) }),
      ]);
    }
  }, 120_000);

  it("a file written before positions imports with its changes in time order: its older cursors go on", async () => {
    if (!pglite) throw new Error("no engines");
    const source = await fresh(await pglite.location());
    for (const [d, h] of [
      ["b.example", 2],
      ["a.example", 1],
      ["c.example", 3],
    ] as const)
      await source.record(result(d, at(h), [member(d, true)]));
    const older = (await exported(source)).replace(/,"last_position":\d+/, "").replace(/,"position":\d+/g, "");
    expect(older).not.toContain("position");
    const copy = await fresh(await pglite.location());
    await importIndex(copy.db, linesOf(older), { merge: false });
    const walk = newWalk();
    await poll(routesOf(copy), walk, 200);
    const inTime = (await heldIds(copy)).length;
    expect(walk.ids).toHaveLength(inTime);
    // Time, entity, kind, claim: a.example's claim ("credentials") before its status ("entity").
    expect(walk.ids.slice(0, 2)).toEqual([
      changeId({ domain: "a.example", kind: "credentials", claim_key: "@a@guild.example/members", at: at(1) }),
      changeId({ domain: "a.example", kind: "entity", claim_key: "", at: at(1) }),
    ]);
    const cursor = Buffer.from(JSON.stringify([at(2), "b.example", "credentials", "@b@guild.example/members"])).toString("base64url");
    const answer = await routesOf(copy).changes({ after: cursor, limit: "2" });
    expect(Changes.parse(answer.body).changes.map((c) => [c.domain, c.kind])).toEqual([
      ["b.example", "entity"],
      ["c.example", "credentials"],
    ]);
  }, 120_000);

  it("two changes of one position in a file are refused, and nothing is written", async () => {
    if (!pglite) throw new Error("no engines");
    const source = await fresh(await pglite.location());
    for (const d of ["a.example", "b.example"]) await source.record(result(d, at(1), [member(d, true)]));
    const edited = (await exported(source)).replace(/"position":4\b/, '"position":1');
    const copy = await fresh(await pglite.location());
    await expect(importIndex(copy.db, linesOf(edited), { merge: false })).rejects.toThrow(/two changes have the same position/);
    expect(await heldIds(copy)).toEqual([]);
  }, 120_000);

  it("a merge places the file's changes after the store's newest: a walker of the store sees each once, after what it had seen", async () => {
    if (!pglite || !postgres) throw new Error("no engines");
    const source = await fresh(await pglite.location());
    // The file's changes are older than the store's: checked hours before.
    for (const d of ["s1.example", "s2.example", "m00.example"]) await source.record(result(d, at(-5), [member(d, false)]));
    const target = await fresh(await postgres.location("positionsmerge"));
    await fill(target);
    const walk = newWalk();
    const routes = routesOf(target);
    await poll(routes, walk, 20);
    const before = walk.ids.length;
    await importIndex(target.db, linesOf(await exported(source)), { merge: true });
    await poll(routes, walk, 20);
    expect(walk.statuses.every((s) => s === 200)).toBe(true);
    expect(twice(walk.ids)).toBe(0);
    expect(sorted(walk.ids)).toEqual(await heldIds(target));
    expect(walk.ids.length - before).toBe(6);
  }, 120_000);
});
