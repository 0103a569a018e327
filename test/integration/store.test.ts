/**
 * The index's records on both engines (docs/decisions.md#the-index): PGlite in memory or in a
 * folder, and a real PostgreSQL server started from Debian's binaries for this file.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { getPriority } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Claim, EntityResult, SearchResponse } from "ident-resolver";
import { openStore, StoreError, type Store, type StoreLocation } from "ident-resolver/store";
import { openDb } from "ident-resolver/store";
import { record } from "ident-resolver/store";
import { migrate, MIGRATIONS } from "ident-resolver/store";
import { entityStanding } from "ident-resolver/store";
import { claimCounts } from "ident-resolver";
import { newEmbeddedDir, useEngines } from "../helpers/engines";

type ClaimSpec = { id: string; verified: boolean; reason?: Claim["reason"]; http_status?: number; not_checked?: Claim["not_checked"] };

function result(domain: string, at: string, properties: ClaimSpec[], status: EntityResult["entity"]["status"] = "accepted"): EntityResult {
  const claim = (c: ClaimSpec): Claim => ({
    id: c.id,
    verified: c.verified,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.http_status ? { http_status: c.http_status } : {}),
    ...(c.not_checked ? { not_checked: c.not_checked } : {}),
    claimed: { id: c.id },
    problems: c.reason ? [{ code: c.reason, severity: "error", message: `failed: ${c.reason}` }] : [],
  });
  return {
    entity: { status, domain, network_id: `§:entity:${domain}`, entity_type: "person", details: { name: "Alice" }, problems: [] },
    properties: status === "accepted" ? properties.map(claim) : [],
    credentials: [],
    connections: [],
    jsonld: null,
    cache: { fetched_at: at, stale: false },
  };
}
const response = (r: EntityResult): SearchResponse => ({
  schema: "ident-resolver/search@1",
  query: { input: r.entity.domain, kind: "domain", domain: r.entity.domain },
  results: [r],
  problems: [],
});
const HOUR = 3600_000;
const T0 = Date.parse("2026-03-03T09:00:00.000Z");
const at = (hours: number) => new Date(T0 + hours * HOUR).toISOString();
const P1 = "§:property:blog.alice.example";
const P2 = "§:property:shop.alice.example";

const { engines: ENGINES, tempDir } = useEngines("store");

describe.each(ENGINES)("the index on $name", ({ location }) => {
  let where: StoreLocation;
  let store: Store;
  beforeAll(async () => {
    where = await location();
    store = await openStore(where);
  }, 60_000);
  afterAll(() => store?.close());

  const recorded = async (r: EntityResult) => (await store.recordResponse(response(r))).results[0]!;

  it("records a first check: every claim first seen, verified since or failing since then", async () => {
    const out = await recorded(
      result("alice.example", at(0), [
        { id: P1, verified: true },
        { id: P2, verified: false, reason: "not_listed" },
      ]),
    );
    expect(out.entity.last_checked_at).toBe(at(0));
    expect(out.properties[0]!.since).toEqual({
      first_seen_at: at(0),
      last_checked_at: at(0),
      last_verified_at: at(0),
      verified_since: at(0),
    });
    expect(out.properties[1]!.since).toEqual({ first_seen_at: at(0), last_checked_at: at(0), failing_since: at(0) });
  });

  it("a first check reads no claims and removes no old changes: an entity the index does not hold has neither; a later one does both", async () => {
    const seen: string[] = [];
    const counted = (r: EntityResult) =>
      store.db.transaction((tx) =>
        record(
          Object.assign(Object.create(tx) as typeof tx, {
            query: (sql: string, params?: unknown[]) => (seen.push(sql), tx.query(sql, params)),
          }),
          r,
        ),
      );
    const readsClaims = () => seen.filter((sql) => sql.startsWith("SELECT * FROM claims")).length;
    const prunes = () => seen.filter((sql) => sql.startsWith("DELETE FROM changes")).length;
    const first = await counted(result("first.example", at(0), [{ id: P1, verified: true }]));
    expect([readsClaims(), prunes()]).toEqual([0, 0]);
    expect(first.result.properties[0]!.since).toEqual({
      first_seen_at: at(0),
      last_checked_at: at(0),
      last_verified_at: at(0),
      verified_since: at(0),
    });
    // Its claim turns: the claims are read, and old changes removed past the number kept.
    await counted(result("first.example", at(1), [{ id: P1, verified: false, reason: "not_listed" }]));
    expect([readsClaims(), prunes()]).toEqual([1, 1]);
    expect((await store.history("first.example"))!.changes.map((c) => c.verified ?? c.status)).toEqual([false, true, "accepted"]);
  });

  it("an answer no newer than the record (from the cache) writes nothing and is annotated alike", async () => {
    const out = await recorded(
      result("alice.example", at(0), [
        { id: P1, verified: true },
        { id: P2, verified: false, reason: "not_listed" },
      ]),
    );
    expect(out.properties[0]!.since?.verified_since).toBe(at(0));
    expect((await store.history("alice.example"))!.changes).toHaveLength(3); // the entity, P1, P2
  });

  it("an entity's history is its newest 200 changes, newest first (one statement: the entity and its changes)", async () => {
    await recorded(result("long.example", at(0), [{ id: P1, verified: true }]));
    // 250 more turns of its claim, each a change.
    await store.db.query(
      `INSERT INTO changes (domain, kind, claim_key, id, at, verified, reason)
       SELECT 'long.example', 'properties', $1, $1, $2::timestamptz + make_interval(secs => n), n % 2 = 0, CASE WHEN n % 2 = 1 THEN 'not_listed' END
       FROM generate_series(1, 250) n`,
      [P1, at(1)],
    );
    const h = (await store.history("long.example"))!;
    expect(h.changes).toHaveLength(200);
    expect(h.changes[0]).toMatchObject({ at: new Date(Date.parse(at(1)) + 250_000).toISOString(), verified: true });
    expect(h.changes.every((c, i) => i === 0 || c.at < h.changes[i - 1]!.at)).toBe(true);
    expect(h.last_checked_at).toBe(at(0));
  });

  it("a card streamed before the check is whole is annotated as the record will be (preview)", async () => {
    await recorded(
      result("preview.example", at(0), [
        { id: P1, verified: true },
        { id: P2, verified: true },
      ]),
    );
    const next = result("preview.example", at(3), [
      { id: P1, verified: false, reason: "not_listed" },
      { id: P2, verified: false, reason: "unreachable" },
    ]);
    const annotateClaim = (await store.preview("preview.example", at(3)))!;
    const previewed = next.properties.map((c, i) => annotateClaim("properties", c, i));
    expect(previewed[1]).toMatchObject({ verified: true, stale: { reason: "unreachable" } });
    const out = await recorded(next);
    expect(previewed).toEqual(out.properties);
    // Once recorded, the same check previews as recorded.
    const again = (await store.preview("preview.example", at(3)))!;
    expect(next.properties.map((c, i) => again("properties", c, i))).toEqual(out.properties);
  });

  it("a claim listed twice (the second a duplicate) is recorded once, as first listed", async () => {
    const out = await recorded(
      result("twice.example", at(0), [
        { id: P1, verified: true },
        { id: P1.toUpperCase(), verified: false, reason: "duplicate" },
      ]),
    );
    expect(out.properties.map((c) => c.since?.verified_since)).toEqual([at(0), at(0)]);
    expect(await store.db.query("SELECT claim_key, verified FROM claims WHERE domain = 'twice.example'")).toEqual([
      { claim_key: P1.toLowerCase(), verified: true },
    ]);
  });

  it("the index counts claims as the preview and the page do (docs/decisions.md#counting-claims): a property listed twice, once in capitals, and an unreachable one are 1 of 2", async () => {
    const checked = result("counted.example", at(0), [
      { id: P1, verified: true },
      { id: P1, verified: false, reason: "duplicate" },
      { id: P1.toUpperCase(), verified: false, reason: "duplicate" },
      { id: P2, verified: false, reason: "unreachable" },
    ]);
    const out = await recorded(checked);
    expect(await entityStanding(store.db, "counted.example")).toMatchObject({ verified: 1, unverified: 1 });
    expect(claimCounts(out)).toEqual({ verified: 1, total: 2 });
  });

  it("records take fair turns at the engine (docs/architecture.md#fair-queues): a client's one result is not held behind a crowd's forty", async () => {
    const done: string[] = [];
    const crowd = Array.from({ length: 40 }, (_, i) =>
      store.record(result(`crowd${i}.example`, at(0), [{ id: P1, verified: true }]), "crowd").then(() => done.push(`crowd${i}`)),
    );
    const polite = store.record(result("polite.example", at(0), [{ id: P1, verified: true }]), "polite").then(() => done.push("polite"));
    await Promise.all([...crowd, polite]);
    // The polite result takes the first turn freed, but what it does after its turn (discovery's
    // queue) and the engine's own locks let some of the crowd's started later end first: CI runs under
    // load saw it 5th and 10th. In a first-come line it would be 41st.
    expect(done.indexOf("polite")).toBeLessThan(done.length / 2);
    expect(await entityStanding(store.db, "polite.example")).toMatchObject({ verified: 1 });
  });

  it("a verdict that holds keeps its run's start; a change starts a new run and is in the history", async () => {
    // Its first check, as the test before records it (again, it writes nothing): the test runs alone too.
    await recorded(
      result("alice.example", at(0), [
        { id: P1, verified: true },
        { id: P2, verified: false, reason: "not_listed" },
      ]),
    );
    await recorded(
      result("alice.example", at(1), [
        { id: P1, verified: true },
        { id: P2, verified: false, reason: "not_listed" },
      ]),
    );
    const out = await recorded(
      result("alice.example", at(2), [
        { id: P1, verified: false, reason: "no_backlink" },
        { id: P2.toUpperCase(), verified: true },
      ]),
    );
    expect(out.properties[0]!.since).toEqual({
      first_seen_at: at(0),
      last_checked_at: at(2),
      last_verified_at: at(1),
      failing_since: at(2),
    });
    // Claims are keyed by their id in lower case.
    expect(out.properties[1]!.since).toEqual({
      first_seen_at: at(0),
      last_checked_at: at(2),
      last_verified_at: at(2),
      verified_since: at(2),
    });
    const h = await store.history("ALICE.example");
    expect(h?.last_checked_at).toBe(at(2));
    expect(h?.changes.slice(0, 2)).toEqual([
      { at: at(2), kind: "properties", id: P2.toUpperCase(), verified: true },
      { at: at(2), kind: "properties", id: P1, verified: false, reason: "no_backlink" },
    ]);
  });

  it("stale on error: a verified claim whose re-check times out stays verified, marked stale, for 24 hours after it was last verified", async () => {
    const d = "stale.example";
    await recorded(result(d, at(0), [{ id: P1, verified: true }]));
    const out = await recorded(result(d, at(5), [{ id: P1, verified: false, reason: "timeout" }]));
    expect(out.properties[0]).toMatchObject({ verified: true, stale: { reason: "timeout", message: "failed: timeout", until: at(24) } });
    expect(out.properties[0]!.reason).toBeUndefined();
    expect(out.properties[0]!.since).toMatchObject({ last_verified_at: at(0), verified_since: at(0), last_checked_at: at(5) });
    const later = await recorded(result(d, at(25), [{ id: P1, verified: false, reason: "timeout" }]));
    expect(later.properties[0]).toMatchObject({ verified: false, reason: "timeout" });
    expect(later.properties[0]!.stale).toBeUndefined();
    expect(later.properties[0]!.since?.failing_since).toBe(at(25));
  });

  it("stale on error holds for an HTTP 503 or 429, not for a 404 or any other answer", async () => {
    await recorded(
      result("s503.example", at(0), [
        { id: P1, verified: true },
        { id: P2, verified: true },
      ]),
    );
    const out = await recorded(
      result("s503.example", at(1), [
        { id: P1, verified: false, reason: "not_found", http_status: 503 },
        { id: P2, verified: false, reason: "not_found", http_status: 429 },
      ]),
    );
    expect(out.properties.map((c) => c.verified)).toEqual([true, true]);
    await recorded(
      result("s404.example", at(0), [
        { id: P1, verified: true },
        { id: P2, verified: true },
      ]),
    );
    const gone = await recorded(
      result("s404.example", at(1), [
        { id: P1, verified: false, reason: "not_found", http_status: 404 },
        { id: P2, verified: false, reason: "no_backlink" },
      ]),
    );
    expect(gone.properties.map((c) => c.verified)).toEqual([false, false]);
  });

  it("a claim this resolver did not check (its query's budget spent) keeps its record as it was: no change, no new check time", async () => {
    const d = "budget.example";
    const P3 = "§:property:new.budget.example";
    await recorded(
      result(d, at(0), [
        { id: P1, verified: true },
        { id: P2, verified: false, reason: "not_listed" },
      ]),
    );
    const refused = { verified: false, reason: "limit" as const, not_checked: "query_budget" as const };
    const out = await recorded(
      result(d, at(1), [
        { id: P1, ...refused },
        { id: P2, ...refused },
        { id: P3, ...refused },
      ]),
    );
    expect(out.entity.last_checked_at).toBe(at(1));
    // What the index knew, unchanged; the claim itself still says it was not checked.
    expect(out.properties[0]).toMatchObject({ verified: false, reason: "limit", not_checked: "query_budget" });
    expect(out.properties[0]!.since).toEqual({
      first_seen_at: at(0),
      last_checked_at: at(0),
      last_verified_at: at(0),
      verified_since: at(0),
    });
    expect(out.properties[1]!.since).toEqual({ first_seen_at: at(0), last_checked_at: at(0), failing_since: at(0) });
    // Never recorded, and not recorded now.
    expect(out.properties[2]!.since).toBeUndefined();
    expect((await store.history(d))!.changes.map((c) => c.status ?? c.id)).toEqual([P2, P1, "accepted"]);
    // A card streamed before the check is whole says the same.
    const annotate = (await store.preview(d, at(2)))!;
    expect(annotate("properties", out.properties[0]!, 0).since).toEqual(out.properties[0]!.since);
    // Still listed: checked later, the claim's run goes on from its first check.
    const back = await recorded(
      result(d, at(2), [
        { id: P1, verified: true },
        { id: P2, verified: false, reason: "not_listed" },
        { id: P3, verified: true },
      ]),
    );
    expect(back.properties.map((c) => c.since?.verified_since ?? c.since?.failing_since)).toEqual([at(0), at(0), at(2)]);
    expect(back.properties[0]!.since?.last_checked_at).toBe(at(2));
  });

  it("an entity that is not accepted changes its status and leaves its claims' records alone", async () => {
    const d = "down.example";
    await recorded(result(d, at(0), [{ id: P1, verified: true }]));
    const out = await recorded(result(d, at(1), [], "unreachable"));
    expect(out.entity.last_checked_at).toBe(at(1));
    const back = await recorded(result(d, at(2), [{ id: P1, verified: true }]));
    expect(back.properties[0]!.since?.verified_since).toBe(at(0));
    expect((await store.history(d))!.changes.map((c) => c.status ?? c.verified)).toEqual(["accepted", "unreachable", true, "accepted"]);
  });

  it("what was never accepted: re-checked at most 3 times after its first check, then out of the queue; gone from the index 7 days after its last check, with its queue job; what was accepted once stays", async () => {
    const queued = async (d: string) => (await store.db.query("SELECT 1 FROM crawl_queue WHERE domain = $1", [d])).length;
    const known = async (d: string) => (await store.db.query("SELECT 1 FROM entities WHERE domain = $1", [d])).length;
    const junk = Array.from({ length: 50 }, (_, i) => `nowhere${i}.test`);
    for (const d of junk) await recorded(result(d, at(0), [], "not_found"));
    expect(await queued("nowhere0.test")).toBe(1);
    // The first check and 3 re-checks: still queued after the second re-check, out after the third.
    for (let i = 1; i <= 2; i++) await recorded(result("nowhere0.test", at(i), [], "not_found"));
    expect(await queued("nowhere0.test")).toBe(1);
    await recorded(result("nowhere0.test", at(3), [], "not_found"));
    expect(await queued("nowhere0.test")).toBe(0);
    // Accepted once, then down for good: kept, and re-checked.
    await recorded(result("once.example", at(0), [{ id: P1, verified: true }]));
    for (let i = 1; i <= 6; i++) await recorded(result("once.example", at(i), [], "unreachable"));
    expect(await queued("once.example")).toBe(1);
    // Nothing leaves before its 7 days; then every never-accepted domain, and its job, is gone.
    expect(await store.prune(new Date(T0 + 7 * 24 * HOUR - 1))).toBe(0);
    expect(await store.prune(new Date(T0 + 3 * HOUR + 7 * 24 * HOUR + 1))).toBe(junk.length);
    expect(await known("nowhere0.test")).toBe(0);
    expect(await known("nowhere49.test")).toBe(0);
    expect((await store.db.query("SELECT 1 FROM crawl_queue WHERE domain LIKE 'nowhere%'")).length).toBe(0);
    expect(await known("once.example")).toBe(1);
    expect(await store.history("nowhere1.test")).toBeNull();
  });

  it("records and their times survive a restart", async () => {
    await store.close();
    store = await openStore(where);
    const h = await store.history("alice.example");
    expect(h?.last_checked_at).toBe(at(2));
    const out = await recorded(result("alice.example", at(2), [{ id: P1, verified: false, reason: "no_backlink" }]));
    expect(out.properties[0]!.since?.failing_since).toBe(at(2));
  });

  it("hostile text is recorded, not dropped: lone surrogates and bidi controls in every field (jsonb refuses an escaped lone surrogate)", async () => {
    const hostile = "\ud800 Mallory \u202e\u2066 \udfff";
    const r = result("surrogate.test", at(0), [{ id: `§:property:surrogate.test`, verified: false, reason: "not_listed" }]);
    r.entity.details = { name: hostile, description: hostile };
    r.entity.problems = [{ code: "unknown_field", severity: "warning", message: hostile }];
    r.properties[0]!.claimed = { id: "§:property:surrogate.test", name: hostile };
    const out = await recorded(r);
    expect(out.entity.last_checked_at).toBe(at(0));
    expect(out.properties[0]!.since?.failing_since).toBe(at(0));
    const history = await store.history("surrogate.test");
    expect(history?.changes.length).toBeGreaterThan(0);
  });

  it("the history of an entity the index does not know is null", async () => {
    expect(await store.history("nobody.example")).toBeNull();
  });
});

describe("migrations", () => {
  it.each(ENGINES)("from an empty store and from the previous schema version, keeping the data ($name)", async ({ empty }) => {
    const db = await openDb(await empty());
    try {
      expect(await migrate(db, MIGRATIONS.slice(0, -1))).toEqual(MIGRATIONS.slice(0, -1).map((m) => m.version));
      await db.query("CREATE TABLE IF NOT EXISTS keep_me (x int)");
      await db.query("INSERT INTO keep_me VALUES (1)");
      expect(await migrate(db)).toEqual([MIGRATIONS.at(-1)!.version]);
      expect(await migrate(db)).toEqual([]);
      expect(await db.query("SELECT x FROM keep_me")).toEqual([{ x: 1 }]);
    } finally {
      await db.close();
    }
  });

  it("a store whose schema is newer than this resolver's is refused, in words", async () => {
    const db = await openDb({ kind: "embedded", dataDir: newEmbeddedDir(tempDir()) });
    try {
      await migrate(db);
      await db.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')");
      await expect(migrate(db)).rejects.toThrow(/version 999, newer than this resolver's/);
    } finally {
      await db.close();
    }
  });

  it("a migration that fails rolls back whole and says which one", async () => {
    const db = await openDb({ kind: "embedded", dataDir: null });
    try {
      const bad = [...MIGRATIONS, { version: 1000, name: "broken", sql: "CREATE TABLE ok_one (x int);\nCREATE TABLE broken (" }];
      await expect(migrate(db, bad)).rejects.toThrow(/migration 1000 \(broken\) failed/);
      expect(await db.query("SELECT to_regclass('entities') AS t")).toEqual([{ t: null }]);
    } finally {
      await db.close();
    }
  });
});

/** The pids of this process's children running the embedded engine. */
const enginePids = (): number[] => enginePidsOf("self");

/** The pids of `parent`'s children running the embedded engine. */
function enginePidsOf(parent: number | "self"): number[] {
  let children: number[];
  try {
    children = readdirSync(`/proc/${parent}/task`).flatMap((task) =>
      readFileSync(`/proc/${parent}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return []; // gone meanwhile
  }
  return children.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("pglite-engine.mjs");
    } catch {
      return false; // gone meanwhile
    }
  });
}
const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/State:\s+Z/.test(readFileSync(`/proc/${pid}/status`, "utf8"));

describe("the embedded engine's process (docs/decisions.md#memory)", () => {
  it("runs apart from the app and ends with the store's close", async () => {
    const before = enginePids();
    const db = await openDb({ kind: "embedded", dataDir: newEmbeddedDir(tempDir()) });
    const [pid] = enginePids().filter((p) => !before.includes(p));
    expect(pid).toBeGreaterThan(0);
    expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    await db.close();
    expect(alive(pid!)).toBe(false);
  });

  it("runs at the priority of the thread that answers pages: every thread of it at the app's nice value (Linux)", async () => {
    const before = enginePids();
    const db = await openDb({ kind: "embedded", dataDir: newEmbeddedDir(tempDir()) });
    try {
      const [pid] = enginePids().filter((p) => !before.includes(p));
      expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
      const nices = readdirSync(`/proc/${pid}/task`).map((task) => {
        const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
      });
      expect(nices.length).toBeGreaterThan(1);
      expect(new Set(nices)).toEqual(new Set([getPriority()]));
    } finally {
      await db.close();
    }
  });

  it("an engine that dies fails what waits on it in words, and later calls at once while it restarts; it never hangs", async () => {
    const before = enginePids();
    const lines: string[] = [];
    const db = await openDb({ kind: "embedded", dataDir: newEmbeddedDir(tempDir()) }, (l) => lines.push(l));
    const [pid] = enginePids().filter((p) => !before.includes(p));
    const waiting = db.query("SELECT count(*) FROM generate_series(1, 5000000)");
    process.kill(pid!, "SIGKILL");
    await expect(waiting).rejects.toThrow(/embedded store stopped \(signal SIGKILL\)/);
    await expect(db.query("SELECT 1")).rejects.toThrow(/embedded store is restarting/);
    expect(db.state?.()).toBe("restarting");
    await db.close();
    expect(lines[0]).toMatch(/^store: the embedded engine stopped \(signal SIGKILL\); starting it again in 500 ms$/);
  });

  // Its own waits allow three rounds of up to 22 s each: more than the default 30 s on a busy machine (seen in CI).
  it("a dead engine is started again (within 5 s, with backoff), migrated, and answers; killed again and again, it comes back each time", async () => {
    const dir = newEmbeddedDir(tempDir());
    const lines: string[] = [];
    const store = await openStore({ kind: "embedded", dataDir: dir }, (l) => lines.push(l));
    try {
      await store.record(result("kept.example", at(0), [{ id: P1, verified: true }]));
      for (let round = 0; round < 3; round++) {
        const [pid] = enginePids().filter((p) => readFileSync(`/proc/${p}/cmdline`, "utf8").includes(dir));
        const killedAt = Date.now();
        process.kill(pid!, "SIGKILL");
        await vi.waitFor(() => expect(store.state()).toBe("restarting"), { timeout: 2000 });
        // Lookups answered meanwhile: each result answered at once, and waiting to be recorded.
        const during = Array.from({ length: 20 }, (_, i) => result(`during${round}-${i}.example`, at(1), [{ id: P1, verified: true }]));
        for (const r of during) expect((await store.record(r)).entity.domain).toBe(r.entity.domain);
        await vi.waitFor(() => expect(store.state()).toBe("running"), { timeout: 10_000, interval: 50 });
        expect(Date.now() - killedAt).toBeLessThan(5000 + 2000);
        expect((await store.history("kept.example"))?.last_checked_at).toBe(at(0));
        // Nothing answered is lost: every one is recorded once the engine is back.
        await vi.waitFor(() => expect(store.backlog).toBe(0), { timeout: 10_000, interval: 100 });
        for (const r of during) expect((await store.history(r.entity.domain))?.last_checked_at).toBe(at(1));
      }
      expect(store.dropped).toBe(0);
      expect(lines.filter((l) => l.startsWith("store: the embedded engine stopped"))).toHaveLength(3);
      expect(lines.filter((l) => l.startsWith("store: the embedded engine runs again"))).toHaveLength(3);
    } finally {
      await store.close();
    }
  }, 90_000);

  it("an app that ends without closing the store leaves no engine behind", async () => {
    const script = `
      const { openDb } = await import(${JSON.stringify(path.resolve("lib/store/db.ts"))});
      await openDb({ kind: "embedded", dataDir: null });
      const children = require("node:fs").readFileSync("/proc/self/task/" + process.pid + "/children", "utf8").trim();
      console.log(children);
      process.exit(0);`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ["--import", "tsx", "--input-type=commonjs", "-e", `(async () => {${script}})()`], (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    const pids = out.trim().split(/\s+/).map(Number);
    expect(pids.length).toBeGreaterThan(0);
    for (let i = 0; i < 50 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    expect(pids.filter(alive)).toEqual([]);
  });

  it("the engine holds the folder's lock: an app killed while its engine writes leaves the lock with the engine, and a new app opens the folder once that engine has ended", async () => {
    const dir = newEmbeddedDir(tempDir());
    // An app that writes in a loop, and says its engine's pid once it runs.
    const script = `
      const { openStore } = await import(${JSON.stringify(path.resolve("lib/store/index.ts"))});
      const store = await openStore({ kind: "embedded", dataDir: ${JSON.stringify(dir)} }, () => undefined);
      const fs = require("node:fs");
      console.log(fs.readFileSync(${JSON.stringify(path.join(dir, "ident.lock"))}, "utf8"));
      // One statement a query: the engine's extended protocol takes no more (two failed the first, and the app ended).
      await store.db.query("CREATE TABLE IF NOT EXISTS busy (x int)");
      for (let i = 0; ; i++) await store.db.query("INSERT INTO busy SELECT generate_series(1, 2000)");`;
    const app = execFile(process.execPath, ["--import", "tsx", "--input-type=commonjs", "-e", `(async () => {${script}})()`]);
    const holder = await new Promise<number>((resolve) =>
      app.stdout?.once("data", (chunk: Buffer) => resolve(Number(String(chunk).trim()))),
    );
    expect(holder).not.toBe(app.pid);
    expect(enginePidsOf(app.pid!)).toContain(holder);
    await new Promise((r) => setTimeout(r, 300)); // writing
    app.kill("SIGKILL");
    // The lock names the engine, still alive for a moment after its app: a new app waits for it, then opens.
    const store = await openStore({ kind: "embedded", dataDir: dir }, () => undefined);
    try {
      // The engine let go of the lock on its way out, its last statement written: it ends within a second
      // (its memory given back), and writes nothing more meanwhile.
      const [before] = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM busy");
      await vi.waitFor(() => expect(alive(holder)).toBe(false), { timeout: 5000, interval: 20 });
      const now = Number(readFileSync(path.join(dir, "ident.lock"), "utf8"));
      expect(now).not.toBe(holder);
      expect(enginePids()).toContain(now);
      expect(await store.ping()).toBe(true);
      // The killed app was writing: what it committed is there.
      const [written] = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM busy");
      expect(written?.n).toBeGreaterThan(0);
      expect(written?.n).toBe(before?.n);
    } finally {
      await store.close();
    }
  });

  it("a long statement never holds up the thread that answers pages: its event loop keeps turning meanwhile", async () => {
    const db = await openDb({ kind: "embedded", dataDir: newEmbeddedDir(tempDir()) });
    try {
      let turns = 0;
      let running = true;
      const spin = () => {
        turns++;
        if (running) setImmediate(spin);
      };
      setImmediate(spin);
      // Two million rows: a second or so of PostgreSQL here.
      const [row] = await db.query<{ n: string }>("SELECT count(*)::text AS n FROM generate_series(1, 2000000) AS g WHERE g % 7 = 0");
      running = false;
      expect(row?.n).toBe("285714");
      // On this thread the statement would have run in one go, between two turns at most.
      expect(turns).toBeGreaterThan(20);
    } finally {
      await db.close();
    }
  });

  it("an error keeps PostgreSQL's code; a transaction that throws is rolled back; a closed store says so", async () => {
    const db = await openDb({ kind: "embedded", dataDir: newEmbeddedDir(tempDir()) });
    await db.query("CREATE TABLE t (x int PRIMARY KEY)");
    await db.query("INSERT INTO t VALUES (1)");
    await expect(db.query("INSERT INTO t VALUES (1)")).rejects.toMatchObject({ code: "23505" });
    await expect(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO t VALUES (2)");
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await db.transaction((tx) => tx.query("SELECT x FROM t ORDER BY x"))).toEqual([{ x: 1 }]);
    // Statements outside a transaction wait for it, and see what it committed.
    const [, after] = await Promise.all([
      db.transaction((tx) => tx.query("INSERT INTO t VALUES (3)")),
      db.query("SELECT count(*)::int AS n FROM t"),
    ]);
    expect(after).toEqual([{ n: 2 }]);
    await db.close();
    await expect(db.query("SELECT 1")).rejects.toThrow(/embedded store is closed/);
  });
});

describe("opening the store", () => {
  it("a second process's store in the same folder is refused in one clear line; a lock left by a dead process is taken over", async () => {
    const dir = newEmbeddedDir(tempDir());
    const first = await openStore({ kind: "embedded", dataDir: dir });
    await expect(openStore({ kind: "embedded", dataDir: dir })).rejects.toThrow(/is in use by another process \(pid \d+\)/);
    await first.close();
    writeFileSync(path.join(dir, "ident.lock"), "999999999");
    const again = await openStore({ kind: "embedded", dataDir: dir });
    await again.close();
  });

  it("a server that cannot be reached stops the opening with a message naming it, without its password", async () => {
    const err = await openStore({ kind: "server", url: "postgres://ident:secret@127.0.0.1:1/none" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(String(err)).toMatch(/PostgreSQL server at postgres:\/\/ident:\*\*\*@127\.0\.0\.1:1\/none cannot be reached/);
  });

  it("a store that fails later never fails a lookup: the result comes back as it was, waits to be recorded, and a line is logged", async () => {
    const lines: string[] = [];
    const store = await openStore({ kind: "embedded", dataDir: newEmbeddedDir(tempDir()) }, (l) => lines.push(l));
    await store.db.close();
    const r = result("after.example", at(0), [{ id: P1, verified: true }]);
    expect((await store.recordResponse(response(r))).results[0]).toEqual(r);
    expect(lines).toEqual([
      expect.stringMatching(/^store: the database does not answer \(.+\); results wait to be recorded until it does$/),
    ]);
    expect(store.backlog).toBe(1);
    expect(await store.ping()).toBe(false);
  });
});

describe("npm start's check (web/check-config.ts) stops the server before it listens", () => {
  const check = (env: Record<string, string>) =>
    new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ["--import", "tsx", path.resolve(import.meta.dirname, "../../web/check-config.ts")],
        { env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", ...env }, timeout: 30_000 },
        (err, _stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stderr }),
      );
    });
  it("on a PostgreSQL server that cannot be reached, naming it", async () => {
    const { code, stderr } = await check({ IDENT_DATABASE_URL: "postgres://ident:pw@127.0.0.1:1/x" });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^ident-resolver: the PostgreSQL server at postgres:\/\/ident:\*\*\*@127\.0\.0\.1:1\/x cannot be reached/);
  });
  it("on a store whose schema is newer than the code", async () => {
    const dir = newEmbeddedDir(tempDir());
    const store = await openStore({ kind: "embedded", dataDir: dir });
    await store.db.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')");
    await store.close();
    const { code, stderr } = await check({ IDENT_DATA_DIR: dir });
    expect(code).toBe(1);
    expect(stderr).toMatch(/schema cannot be brought up to date: the store's schema is at version 999/);
  });
  it("on a store in use by another process; and passes, leaving it unlocked, when all is well", async () => {
    const dir = newEmbeddedDir(tempDir());
    const held = await openStore({ kind: "embedded", dataDir: dir });
    expect(await check({ IDENT_DATA_DIR: dir })).toMatchObject({ code: 1, stderr: expect.stringMatching(/is in use by another process/) });
    await held.close();
    expect(await check({ IDENT_DATA_DIR: dir })).toEqual({ code: 0, stderr: "" });
    await (await openStore({ kind: "embedded", dataDir: dir })).close();
  });
});
