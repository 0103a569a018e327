/**
 * The Atom feeds (docs/api.md#feeds) on both engines, read back by a real feed parser
 * (@rowanmanning/feed-parser): an entity's changes of verdict and an issuer's credentials' changes,
 * newest first, one entry per change with an id that is the same however often it is written, and a
 * hostile name that still makes a document the parser reads.
 */
import { parseFeed } from "@rowanmanning/feed-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Claim, EntityResult } from "ident-resolver";
import { reasonText } from "ident-resolver/present";
import { openStore, type Store } from "ident-resolver/store";
import { entityChanges, issuerChanges, type FeedChange } from "ident-resolver/store";
import { atomFeed, changeTitle } from "../../web/feeds";
import { xml } from "../../web/xml";
import { useEngines } from "../helpers/engines";

const HOUR = 3600_000;
const T0 = Date.parse("2026-05-01T08:00:00.000Z");
const at = (hours: number) => new Date(T0 + hours * HOUR).toISOString();
const ORIGIN = "https://resolver.example";
const options = (self: string, page: string) => ({
  self: `${ORIGIN}${self}`,
  page: `${ORIGIN}${page}`,
  title: "changes",
  since: at(0),
  entityPage: (d: string) => `${ORIGIN}/entity/${d}`,
});

const MEMBERS = "@alice@guild.example/members";
const PRESS = "@alice@press.example/card";
/** A name meant to break XML and markup: a tag, an entity, a control character XML cannot hold, a bidi override. */
const HOSTILE = "<script>alert(1)</script> &amp; \u0007\u202eevil";

function result(
  domain: string,
  when: string,
  credentials: { id: string; verified: boolean; title?: string }[],
  name = "Alice",
): EntityResult {
  const claim = (c: { id: string; verified: boolean; title?: string }): Claim => ({
    id: c.id,
    verified: c.verified,
    ...(c.verified ? {} : { reason: "not_listed" as const }),
    claimed: { id: c.id, ...(c.title ? { title: c.title } : {}) },
    problems: [],
  });
  return {
    entity: { status: "accepted", domain, network_id: `§:entity:${domain}`, entity_type: "person", details: { name }, problems: [] },
    properties: [],
    credentials: credentials.map(claim),
    connections: [],
    jsonld: null,
    cache: { fetched_at: when, stale: false },
  };
}

const { engines: ENGINES } = useEngines("feeds");

describe.each(ENGINES)("feeds on $name", ({ location }) => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore(await location());
    await store.record(
      result("alice.example", at(0), [
        { id: MEMBERS, verified: true, title: "Member" },
        { id: PRESS, verified: true },
      ]),
    );
    await store.record(
      result("alice.example", at(1), [
        { id: MEMBERS, verified: false, title: "Member" },
        { id: PRESS, verified: true },
      ]),
    );
    await store.record(
      result("alice.example", at(2), [
        { id: MEMBERS, verified: true, title: "Member" },
        { id: PRESS, verified: true },
      ]),
    );
    await store.record(result("bob.example", at(3), [{ id: "@bob@guild.example/members", verified: true }], HOSTILE));
  }, 60_000);
  afterAll(() => store?.close());

  it("an entity's feed: every change newest first, each linking to the entity's page", async () => {
    const found = await entityChanges(store.db, "alice.example");
    const feed = parseFeed(atomFeed(found!.changes, options("/entity/alice.example/feed.xml", "/entity/alice.example")));
    expect(feed.meta.type).toBe("atom");
    expect(feed.updated?.toISOString()).toBe(at(2));
    expect(feed.self).toBe(`${ORIGIN}/entity/alice.example/feed.xml`);
    expect(feed.items.map((i) => [i.title, i.updated?.toISOString()])).toEqual([
      ["Alice: Credential Member is verified", at(2)],
      [`Alice: Credential Member is no longer verified (${reasonText("not_listed")})`, at(1)],
      // Changes recorded at one time: the last written first.
      [`Alice: Credential ${PRESS} is verified`, at(0)],
      ["Alice: Credential Member is verified", at(0)],
      ["Alice: the entity is accepted", at(0)],
    ]);
    expect(new Set(feed.items.map((i) => i.url))).toEqual(new Set([`${ORIGIN}/entity/alice.example`]));
  });

  it("ids are unique, and the same each time the feed is written", async () => {
    const write = async () => parseFeed(atomFeed((await entityChanges(store.db, "alice.example"))!.changes, options("/f", "/p")));
    const [a, b] = [await write(), await write()];
    const ids = a.items.map((i) => i.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(b.items.map((i) => i.id)).toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("an issuer's feed: the changes of the credentials it issues, whoever holds them", async () => {
    const changes = await issuerChanges(store.db, "GUILD.example");
    const feed = parseFeed(atomFeed(changes, options("/issuer/guild.example/feed.xml", "/issuer/guild.example")));
    expect(feed.items.map((i) => i.url)).toEqual([
      `${ORIGIN}/entity/bob.example`,
      `${ORIGIN}/entity/alice.example`,
      `${ORIGIN}/entity/alice.example`,
      `${ORIGIN}/entity/alice.example`,
    ]);
    expect(await issuerChanges(store.db, "nobody.example")).toEqual([]);
    // An empty feed is still a feed.
    expect(parseFeed(atomFeed([], options("/issuer/nobody.example/feed.xml", "/issuer/nobody.example"))).items).toEqual([]);
  });

  it("a hostile name stays text: the parser reads the feed, with no markup and nothing XML cannot hold", async () => {
    const changes = (await entityChanges(store.db, "bob.example"))!.changes;
    const xml = atomFeed(changes, options("/entity/bob.example/feed.xml", "/entity/bob.example"));
    expect(xml).not.toContain("<script>");
    for (const c of ["\u0007", "\u202e"]) expect(xml).not.toContain(c);
    const feed = parseFeed(xml);
    expect(xml).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp;amp;");
    expect(feed.items[0]!.title).toContain("<script>alert(1)</script>");
    expect(feed.items[0]!.title).not.toContain("\u202e");
  });

  it("the index does not know the domain: no feed", async () => expect(await entityChanges(store.db, "nobody.example")).toBeNull());
});

describe("what an entry says", () => {
  const base = {
    domain: "a.example",
    name: "A",
    claim_key: "k",
    id: "§:property:b.example",
    label: null,
    at: at(0),
    status: null,
    verified: null,
    reason: null,
  };
  it.each([
    [{ kind: "entity", status: "unreachable" }, "A: the domain could not be reached"],
    [{ kind: "entity", status: "accepted" }, "A: the entity is accepted"],
    [{ kind: "properties", verified: true }, "A: Property §:property:b.example is verified"],
    [{ kind: "connections", verified: false, reason: "bogus" }, "A: Connection §:property:b.example is no longer verified (not verified)"],
    [{ kind: "entity" }, "A: changed"],
    [{ kind: "entity", status: "gone\u202e away" }, "A: gone away"],
    // docs/decisions.md#rendering: the one cleaning, DEL and the C1 controls too, as an index holds them.
    [
      { kind: "properties", verified: true, name: "A\u0007\u007f\u0085", label: "B\u0001\u001b\ufffe" },
      "A\ufffd\ufffd\ufffd: Property B\ufffd\ufffd\ufffd is verified",
    ],
  ] as const)("%o → %s", (change, title) => expect(changeTitle(Object.assign({}, base, change))).toBe(title));

  // docs/decisions.md#rendering: as an imported index may hold them, named like a member of Object's prototype.
  it.each(["constructor", "__proto__", "toString", "hasOwnProperty"])(
    "a status, reason or kind %j is text, never a prototype member",
    (value) => {
      expect(changeTitle(Object.assign({}, base, { kind: "entity", status: value }))).toBe(`A: ${value}`);
      expect(changeTitle(Object.assign({}, base, { kind: "credentials", verified: false, reason: value }))).toBe(
        "A: Credential §:property:b.example is no longer verified (not verified)",
      );
      const kind = value as FeedChange["kind"];
      expect(changeTitle(Object.assign({}, base, { kind, verified: true }))).toBe("A: Claim §:property:b.example is verified");
    },
  );
});

describe("text XML cannot hold", () => {
  it("a NUL, a lone surrogate and U+FFFF become U+FFFD; a pair is kept; markup is escaped", () => {
    expect(xml("a\u0000b\ud800c\uffffd\ud83d\ude00<&>\t\n")).toBe("a\ufffdb\ufffdc\ufffdd\ud83d\ude00&lt;&amp;&gt;\t\n");
  });
});
