/**
 * What the index knows at a glance and every change in the order recorded (lib/store/overview.ts,
 * docs/decisions.md#the-home-page, docs/api.md#changes), on both engines: the counts kept by the
 * triggers through records, changes of verdict and the prune, equal to a count from the rows; the
 * latest changes and the issuers vouching for most; every change paged once in either direction; a
 * cursor handed out before an export that points at the same place after its import.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Claim, EntityResult } from "ident-resolver";
import { openStore, type Store } from "ident-resolver/store";
import { exportIndex, importIndex, type NumberedLine } from "ident-resolver/store";
import type { FeedChange } from "ident-resolver/store";
import { recount } from "ident-resolver/store";
import { cursorOf, decodeChangeCursor, indexCounts } from "ident-resolver/store";
import { useEngines } from "../helpers/engines";

const HOUR = 3600_000;
const T0 = Date.parse("2026-05-01T08:00:00.000Z");
const at = (hours: number) => new Date(T0 + hours * HOUR).toISOString();

type Cred = { id: string; verified: boolean };
function result(domain: string, when: string, credentials: Cred[], status: "accepted" | "not_found" = "accepted"): EntityResult {
  const claim = (c: Cred): Claim => ({
    id: c.id,
    verified: c.verified,
    ...(c.verified ? {} : { reason: "not_listed" as const }),
    claimed: { id: c.id },
    problems: [],
  });
  return {
    entity:
      status === "accepted"
        ? { status, domain, network_id: `§:entity:${domain}`, details: { name: domain }, problems: [] }
        : { status, domain, problems: [] },
    properties: [],
    credentials: status === "accepted" ? credentials.map(claim) : [],
    connections: [],
    jsonld: null,
    cache: { fetched_at: when, stale: false },
  };
}

/** The position a handed-out cursor names, as a reader of the API would ask with it. */
async function positionAt(store: Store, cursor: string): Promise<string | null> {
  const decoded = decodeChangeCursor(cursor);
  return decoded === null ? null : store.positionOf(decoded);
}

async function everyChange(store: Store, order: "after" | "before", limit: number): Promise<FeedChange[]> {
  const seen: FeedChange[] = [];
  let position: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await store.changes(order === "after" ? { after: position } : { before: position }, limit);
    seen.push(...page.changes);
    const last = page.changes.at(-1);
    if (!page.more || !last) return seen;
    position = await positionAt(store, cursorOf(last));
  }
  throw new Error("more than 1000 pages");
}
const keyOf = (c: FeedChange) => `${c.at} ${c.domain} ${c.kind} ${c.claim_key}`;

const { engines: ENGINES } = useEngines("overview");

describe.each(ENGINES)("the index at a glance, and every change, on $name", ({ location }) => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore(await location());
    // Three members of the guild, two of the press; one of the guild fails later; a domain never accepted.
    for (const [i, d] of ["a.example", "b.example", "c.example"].entries()) {
      await store.record(
        result(d, at(i), [
          { id: `@${d.split(".")[0]}@guild.example/members`, verified: true },
          { id: `@${d.split(".")[0]}@press.example/card`, verified: i < 2 },
        ]),
      );
    }
    await store.record(result("nobody.example", at(3), [], "not_found"));
    await store.record(
      result("c.example", at(4), [
        { id: "@c@guild.example/members", verified: false },
        { id: "@c@press.example/card", verified: false },
      ]),
    );
  });
  afterAll(() => store.close());

  it("counts entities, accepted ones, verified claims and issuers as they change, equal to a count of the rows", async () => {
    const overview = await store.overview(10, 5);
    expect(overview.counts).toEqual({ entities: 4, accepted: 3, verified_claims: 4, issuers: 2 });
    const kept = await indexCounts(store.db);
    await store.db.transaction(recount);
    expect(await indexCounts(store.db)).toEqual(kept);
  });

  it("the issuers vouching for the most members first, each with its verified members", async () => {
    expect((await store.overview(10, 5)).issuers).toEqual([
      { issuer: "guild.example", members: 2 },
      { issuer: "press.example", members: 2 },
    ]);
  });

  it("the latest changes, newest first: c.example's guild membership failing at the top", async () => {
    const latest = (await store.overview(2, 5)).latest;
    expect(latest.map((c) => [c.domain, c.kind, c.id, c.verified, c.at])).toEqual([
      ["c.example", "credentials", "@c@guild.example/members", false, at(4)],
      ["nobody.example", "entity", null, null, at(3)],
    ]);
  });

  it("pages every change once, oldest first and newest first, whatever the page's size", async () => {
    const all = await everyChange(store, "after", 1000);
    expect(all.length).toBeGreaterThan(6);
    expect(all.map((c) => c.at)).toEqual([...all.map((c) => c.at)].sort());
    for (const limit of [1, 2, 3, 7]) {
      expect((await everyChange(store, "after", limit)).map(keyOf)).toEqual(all.map(keyOf));
      expect((await everyChange(store, "before", limit)).map(keyOf)).toEqual(all.map(keyOf).reverse());
    }
  });

  it("a cursor handed out before an export points at the same place after the export is imported elsewhere", async () => {
    const first = await store.changes({ after: null }, 3);
    const last = first.changes.at(-1);
    if (!last) throw new Error("no change");
    const cursor = cursorOf(last);
    const rest = await store.changes({ after: await positionAt(store, cursor) }, 1000);
    let text = "";
    await exportIndex(store.db, (line) => void (text += line));
    const copy = await openStore(await location("overviewcopy"));
    try {
      async function* lines(): AsyncGenerator<NumberedLine> {
        let n = 0;
        for (const line of text.split("\n").filter(Boolean)) yield { n: ++n, text: line };
      }
      await importIndex(copy.db, lines(), { merge: false });
      expect((await copy.changes({ after: await positionAt(copy, cursor) }, 1000)).changes.map(keyOf)).toEqual(rest.changes.map(keyOf));
      // What the counts are is worked out again from what was imported.
      expect((await copy.overview(1, 5)).counts).toEqual((await store.overview(1, 5)).counts);
    } finally {
      await copy.close();
    }
  });

  it("the prune keeps the counts: a domain never accepted leaves, and is no longer counted", async () => {
    const before = (await store.overview(1, 5)).counts;
    expect(await store.prune(new Date(Date.parse(at(3)) + 8 * 24 * HOUR))).toBe(1);
    expect((await store.overview(1, 5)).counts).toEqual(Object.assign({}, before, { entities: before.entities - 1 }));
  });

  it("refuses a cursor it did not hand out", async () => {
    for (const bad of ["", "x", "%%%", Buffer.from('["not a time","a","b","c"]').toString("base64url"), "a".repeat(3000)])
      expect(decodeChangeCursor(bad)).toBeNull();
    expect(await positionAt(store, "p100000")).toBeNull();
  });
});
