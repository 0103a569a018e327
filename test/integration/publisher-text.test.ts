/**
 * Publisher text kept at its lengths and cleaned once (docs/decisions.md#validation,
 * docs/decisions.md#rendering, docs/decisions.md#the-index), over the real fetcher, the sample
 * network and a real PostgreSQL server: a claim id too long to index is a problem of that claim and
 * the entity is still recorded; the longest strings a publisher can send make bounded answers; control
 * characters never reach the home page or a feed.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { DOMParser } from "@xmldom/xmldom";
import { Parser } from "htmlparser2";
import { createElement, type ReactElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaimCard } from "../../components/claim-card";
import { EntityHeader } from "../../components/entity-header";
import { IndexOverview } from "../../components/index-overview";
import { IndexResults } from "../../components/index-results";
import { claimView, entityView } from "ident-resolver/present";
import type { EntityResult, SearchResponse } from "ident-resolver";
import { openStore, type Store } from "ident-resolver/store";
import { openDb } from "ident-resolver/store";
import { migrate, MIGRATIONS } from "ident-resolver/store";
import { entityChanges } from "ident-resolver/store";
import { changesAnswer } from "ident-resolver/store";
import { entityStanding } from "ident-resolver/store";
import { atomFeed } from "../../web/feeds";
import { useEngines } from "../helpers/engines";
import { useSampleNetwork } from "../helpers/sample";
import { scratchDir } from "../helpers/scratch";
import type { Site } from "../network/server";

const S = "\u00a7";
const json = (value: unknown) => JSON.stringify(value);
/** A URL of `bytes` characters that no compression makes small: an index row of it cannot be squeezed under the page. */
const longUrl = (host: string, bytes: number) =>
  `https://${host}/${randomBytes(bytes)
    .toString("hex")
    .slice(0, bytes - host.length - 9)}`;

/** Every control character of the finding, and what else HTML or XML cannot hold or must not show. */
const CONTROLS = ["\u0001", "\u0007", "\u001b", "\u0008", "\u000b", "\u000c", "\u007f", "\u0085", "\ufffe", "\uffff", "\ud800"];
const HOSTILE_NAME = `Ctl${CONTROLS.join("x")}name \u202eevil`;

const SITES: Record<string, Site> = {
  // Finding 4: verified 1 of 1, then the property revokes and the entity adds a 9 KB connection URL.
  "freeze.test": {
    files: { "/ident.json": json({ network_id: `${S}:entity:freeze.test`, properties: [{ id: `${S}:property:freeze-site.test` }] }) },
  },
  "freeze-site.test": {
    files: {
      "/ident-property.json": json({
        ident_property: { id: `${S}:property:freeze-site.test`, ownership: [{ network_id: `${S}:entity:freeze.test` }] },
      }),
    },
  },
  // Finding 5: a 1 MB entity_type with long details, as JSON.
  "big-type.test": {
    files: {
      "/ident.json": json({
        network_id: `${S}:entity:big-type.test`,
        entity_type: "t".repeat(1_000_000),
        details: { name: `Big ${"n".repeat(10_000)}`, email: "e".repeat(5_000), description: "d".repeat(20_000) },
      }),
    },
  },
  // Finding 5: four 220 KB connection URLs and a long property, through the HTML embed (V7).
  "big-urls.test": {
    files: {
      "/index.html": `<!doctype html><title>x</title><script type="application/json" id="ident-hub">${json({
        network_id: `${S}:entity:big-urls.test`,
        entity_type: "x".repeat(600_000),
        details: { name: "Big URLs" },
        properties: [{ id: `${S}:property:${"p".repeat(60)}.test`, name: "q".repeat(200_000), url: longUrl("p.test", 100_000) }],
        other_connections: Array.from({ length: 4 }, (_, i) => ({ id: longUrl(`c${i}.test`, 220_000) })),
      })}</script>`,
    },
  },
  // Finding 8: a name with raw control characters.
  "controls.test": {
    files: {
      "/ident.json": json({
        network_id: `${S}:entity:controls.test`,
        details: { name: HOSTILE_NAME, description: `D${CONTROLS.join("")}` },
        properties: [{ id: `${S}:property:controls-site.test`, name: `P${CONTROLS.join("")}` }],
      }),
    },
  },
  "controls-site.test": {
    files: { "/ident-property.json": json({ ident_property: { id: `${S}:property:controls-site.test`, ownership: [] } }) },
  },
};

const net = useSampleNetwork({ extraSites: SITES });
const { engines } = useEngines("publishertext");
const POSTGRES = engines.find((e) => e.name === "PostgreSQL")!;

const bytes = (text: string) => Buffer.byteLength(text);

describe("publisher text over the real fetcher, into PostgreSQL", () => {
  let store: Store;
  /** A lookup as the app makes it, with a fresh cache: every document fetched again, the result recorded. */
  const lookUp = async (domain: string): Promise<SearchResponse> => {
    const outcome = await net.resolver().search(domain);
    if (!outcome.ok) throw new Error(`the lookup of ${domain} was not answered`);
    return store.recordResponse(outcome.response);
  };
  beforeAll(async () => {
    store = await openStore(await POSTGRES.location(), () => undefined);
  }, 60_000);
  afterAll(() => store?.close());

  it("a 9 KB connection URL is a problem of that claim, in words; the entity's new verdict is recorded, and the badge and search say it", async () => {
    await lookUp("freeze.test");
    expect(await entityStanding(store.db, "freeze.test")).toMatchObject({ status: "accepted", verified: 1, unverified: 0 });

    const url = longUrl("profile.test", 9_000);
    net.net.change("freeze-site.test", {
      files: { "/ident-property.json": json({ ident_property: { id: `${S}:property:freeze-site.test`, ownership: [] } }) },
    });
    net.net.change("freeze.test", {
      files: {
        "/ident.json": json({
          network_id: `${S}:entity:freeze.test`,
          properties: [{ id: `${S}:property:freeze-site.test` }],
          other_connections: [{ id: url }],
        }),
      },
    });
    const [result] = (await lookUp("freeze.test")).results;
    const [connection] = result!.connections;
    expect(connection).toMatchObject({ verified: false, reason: "invalid_entry" });
    expect(connection!.problems.map((p) => p.message).join(" ")).toMatch(
      /other_connections\[0\]\.id is 9,000 bytes long; an id is read up to 1,024 bytes/,
    );
    expect(bytes(connection!.id ?? "")).toBeLessThanOrEqual(1024);
    // Recorded: the property's revocation and the connection, the counts the badge and search give.
    expect(connection!.since?.failing_since).toBeDefined();
    expect(await entityStanding(store.db, "freeze.test")).toMatchObject({ status: "accepted", verified: 0, unverified: 2 });
    const hit = (await store.search("freeze"))!.results.find((h) => h.domain === "freeze.test");
    expect(hit).toMatchObject({ verified: 0, unverified: 2 });
    const history = (await store.history("freeze.test"))!.changes;
    expect(history.filter((c) => c.kind === "properties").map((c) => c.reason ?? "verified")).toEqual(["not_listed", "verified"]);
    for (const c of history) expect(bytes(c.id ?? "")).toBeLessThanOrEqual(1024);
  });

  it("the longest strings a publisher can send (a 1 MB entity_type, 220 KB URLs, through JSON and the HTML embed) make bounded answers", async () => {
    for (const domain of ["big-type.test", "big-urls.test"]) {
      const response = await lookUp(domain);
      const [result] = response.results;
      expect(result!.entity.status).toBe("accepted");
      const answer = JSON.stringify(response);
      expect(bytes(answer), `${domain}: /api/resolve`).toBeLessThan(64 * 1024);
      expect(longestString(response), `${domain}: the longest string of /api/resolve`).toBeLessThanOrEqual(5000);
      expect([...(result!.entity.entity_type ?? "")].length).toBeLessThanOrEqual(300);
      expect([...(result!.entity.details?.name ?? "")].length).toBeLessThanOrEqual(300);
      // What a page shows of it.
      const page = entityPage(result!);
      expect(bytes(page), `${domain}: the entity page's cards`).toBeLessThan(64 * 1024);
      // What the index answers of it: the history, every change, a search, a feed.
      const history = JSON.stringify(await store.history(domain));
      expect(bytes(history)).toBeLessThan(16 * 1024);
      const feed = atomFeed((await entityChanges(store.db, domain))!.changes, FEED);
      expect(bytes(feed), `${domain}: its feed`).toBeLessThan(32 * 1024);
    }
    const [connection] = (await lookUp("big-urls.test")).results[0]!.connections;
    expect(connection).toMatchObject({ verified: false, reason: "invalid_entry" });
    expect(connection!.problems[0]!.message).toMatch(
      /^other_connections\[0\]\.id is 2\d\d,\d{3} bytes long; an id is read up to 1,024 bytes/,
    );
    const property = (await lookUp("big-urls.test")).results[0]!.properties[0]!;
    expect(property.problems.map((p) => p.message)).toContain(
      "properties[0].url is 100,000 bytes long; a URL is read up to 1,024 bytes, and it was ignored",
    );
    const search = JSON.stringify(await store.search("big"));
    expect(bytes(search), "/api/search").toBeLessThan(32 * 1024);
    const changes = JSON.stringify(changesAnswer(await store.changes({ after: null }, 200)));
    expect(bytes(changes), "/api/changes?limit=200").toBeLessThan(64 * 1024);
  });

  it("control characters reach neither the home page, nor a search, nor an entity's cards, nor a feed; kept long ago or recorded now", async () => {
    const [result] = (await lookUp("controls.test")).results;
    // What an index recorded before this change (or an import) may hold: the raw name.
    await store.db.query("UPDATE entities SET name = $2 WHERE domain = $1", ["controls.test", HOSTILE_NAME.replace("\ud800", "")]);
    const overview = await store.overview(10, 5);
    expect(overview.latest.some((c) => c.domain === "controls.test")).toBe(true);
    const pages = {
      home: renderToStaticMarkup(createElement(IndexOverview, { overview, now: new Date() })),
      search: renderToStaticMarkup(createElement(IndexResults, { page: (await store.search("ctl"))!, cursor: null, now: new Date() })),
      entity: entityPage(result!),
    };
    expect(pages.home).toContain("Latest changes");
    expect(pages.search).toContain("controls.test");
    for (const [name, html] of Object.entries(pages)) expect(shownText(html).filter(hasControl), name).toEqual([]);
    expect(await htmlErrors(pages)).toEqual([]);

    for (const feed of [
      atomFeed((await entityChanges(store.db, "controls.test"))!.changes, FEED),
      atomFeed((await store.changes({ before: null }, 50)).changes, FEED),
    ]) {
      const texts = xmlText(feed);
      expect(texts.some((t) => t.includes("Ctl"))).toBe(true);
      expect(texts.filter((t) => hasControl(t) || /[\u202a-\u202e\u2066-\u2069]/.test(t))).toEqual([]);
    }
  }, 60_000);
});

describe("an index recorded before the lengths were kept (migration 9, docs/decisions.md#the-index)", () => {
  it("is cut as the recorder cuts now: a long claim key re-keyed with its changes, ids, entity type, network_id, details and messages", async () => {
    const db = await openDb(await POSTGRES.location("beforelengths"));
    try {
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version <= 8),
      );
      const long = (c: string, n: number) => c.repeat(n);
      await db.query(
        `INSERT INTO entities (domain, status, network_id, entity_type, details, problems, first_seen_at, last_checked_at)
         VALUES ('old.test', 'accepted', $1, $2, $3, $4, now(), now())`,
        [
          long("n", 5000),
          long("t", 100_000),
          json({ name: long("a", 300), email: long("e", 2000), description: long("d", 5000) }),
          json([{ code: "c", severity: "error", message: long("m", 10_000) }]),
        ],
      );
      // A key PostgreSQL could squeeze into its index, as an index of before may hold.
      const key = `https://a.test/${long("k", 6000)}`;
      await db.query(
        `INSERT INTO claims (domain, kind, claim_key, id, present, verified, first_seen_at, last_checked_at)
         VALUES ('old.test', 'connections', $1, $1, true, false, now(), now())`,
        [key],
      );
      await db.query(
        "INSERT INTO changes (domain, kind, claim_key, id, at, verified) VALUES ('old.test', 'connections', $1, $1, now(), false)",
        [key],
      );
      expect(await migrate(db)).toContain(9);
      const [entity] = await db.query<{
        network_id: string;
        entity_type: string;
        details: Record<string, string>;
        problems: { message: string }[];
      }>("SELECT network_id, entity_type, details, problems FROM entities");
      expect(bytes(entity!.network_id)).toBeLessThanOrEqual(1024);
      expect([...entity!.entity_type]).toHaveLength(300);
      expect(entity!.details).toEqual({ name: long("a", 300), email: `${long("e", 299)}…`, description: long("d", 5000) });
      expect(entity!.problems[0]!.message).toHaveLength(2000);
      const claims = await db.query<{ claim_key: string; id: string }>("SELECT claim_key, id FROM claims");
      const changes = await db.query<{ claim_key: string; id: string }>("SELECT claim_key, id FROM changes");
      expect(claims[0]!.claim_key).toMatch(/^#sha256:[0-9a-f]{64}$/);
      expect(changes.map((c) => c.claim_key)).toEqual([claims[0]!.claim_key]);
      for (const row of [...claims, ...changes]) expect(bytes(row.id)).toBeLessThanOrEqual(1024);
    } finally {
      await db.close();
    }
  });
});

const FEED = {
  self: "https://resolver.example/feed.xml",
  page: "https://resolver.example/",
  title: "changes",
  since: new Date(0).toISOString(),
  entityPage: (d: string) => `https://resolver.example/entity/${d}`,
};

/** The longest string anywhere in a JSON value, keys included, in code points. */
function longestString(value: unknown): number {
  if (typeof value === "string") return [...value].length;
  if (Array.isArray(value)) return Math.max(0, ...value.map(longestString));
  if (typeof value === "object" && value !== null)
    return Math.max(0, ...Object.entries(value).map(([k, v]) => Math.max([...k].length, longestString(v))));
  return 0;
}

const SETTINGS = { fetchTimeoutMs: 10_000 };
/** The entity page's cards, as the page renders them from the result. */
function entityPage(result: EntityResult): string {
  const header = createElement(EntityHeader, { view: entityView(result.entity, result.cache, SETTINGS), headingLevel: 1 });
  const lists = (["properties", "credentials", "connections"] as const).map((list) => {
    const kind = list === "properties" ? "property" : list === "credentials" ? "credential" : "connection";
    const cards: ReactElement[] = result[list].map((claim, i) =>
      createElement(ClaimCard, { key: i, view: claimView(kind, claim, SETTINGS) }),
    );
    return createElement("ul", { key: list, className: "claims" }, ...cards);
  });
  return renderToStaticMarkup(createElement("main", null, header, ...lists));
}

/** Any character the one cleaning replaces (docs/decisions.md#rendering), found by the code point. */
const hasControl = (text: string) =>
  [...text].some((ch) => {
    const c = ch.codePointAt(0)!;
    return (
      (c < 0x20 && ch !== "\t" && ch !== "\n" && ch !== "\r") ||
      (c >= 0x7f && c <= 0x9f) ||
      (c >= 0xd800 && c <= 0xdfff) ||
      (c & 0xfffe) === 0xfffe
    );
  });

/** The text of an HTML fragment as a parser reads it: its text nodes and attribute values. */
function shownText(html: string): string[] {
  const out: string[] = [];
  const parser = new Parser({ ontext: (t) => void out.push(t), onattribute: (_, v) => void out.push(v) }, { decodeEntities: true });
  parser.end(html);
  return out;
}

/** The text of an XML document as a strict parser reads it; a parser error fails the test. */
function xmlText(text: string): string[] {
  const errors: string[] = [];
  const doc = new DOMParser({ onError: (level, message) => void (level !== "warning" && errors.push(message)) }).parseFromString(
    text,
    "text/xml",
  );
  expect(errors).toEqual([]);
  const out: string[] = [];
  const walk = (node: { nodeType: number; nodeValue: string | null; childNodes?: ArrayLike<unknown> }) => {
    if (node.nodeType === 3 && node.nodeValue) out.push(node.nodeValue);
    for (const child of Array.from(node.childNodes ?? [])) walk(child as typeof node);
  };
  walk(doc as unknown as Parameters<typeof walk>[0]);
  return out;
}

/** The Nu HTML Checker's errors for each page (e2e/html-valid.spec.ts runs the same checker over the built app). */
async function htmlErrors(pages: Record<string, string>): Promise<string[]> {
  const VNU = createRequire(import.meta.url)("vnu-jar") as string;
  const dir = scratchDir("ident-publisher-text-");
  const files = Object.entries(pages).map(([name, body]) => {
    const file = path.join(dir, `${name}.html`);
    writeFileSync(
      file,
      `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${name}</title></head><body>${body}</body></html>`,
    );
    return file;
  });
  const out = await new Promise<string>((resolve, reject) =>
    execFile("java", ["-jar", VNU, "--format", "json", "--stdout", ...files], { maxBuffer: 16 << 20 }, (err, stdout) =>
      stdout ? resolve(stdout) : reject(err ?? new Error("vnu printed nothing")),
    ),
  );
  const { messages } = JSON.parse(out) as {
    messages: { type: string; subType?: string; message: string; url: string; extract?: string }[];
  };
  return messages
    .filter((m) => m.type === "error" || m.subType === "fatal" || m.type === "non-document-error")
    .map((m) => `${path.basename(m.url)}: ${m.message} ${JSON.stringify(m.extract ?? "")}`);
}
