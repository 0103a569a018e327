/**
 * Values named like a member of Object's prototype (docs/decisions.md#rendering): an entity type a
 * publisher wrote, and a status, a reason and a claim's kind as an imported index may hold them, read
 * back through what a stranger uses: the search page's hits, the Atom feeds and `ident search`. Each
 * is shown as text (or in neutral words), never as a prototype member, and never fails.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseFeed } from "@rowanmanning/feed-parser";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IndexResults } from "../../components/index-results";
import type { EntityResult } from "ident-resolver";
import { openStore, type Store } from "ident-resolver/store";
import { entityChanges } from "ident-resolver/store";
import { atomFeed } from "../../web/feeds";

const HOSTILE = ["constructor", "__proto__", "toString", "hasOwnProperty"] as const;
/** What a prototype member reads as when it is made text. */
const LEAKS = ["function Object", "function ", "[native code]", "[object Object]", "undefined"];
const AT = "2026-05-01T08:00:00.000Z";
const LATER = "2026-05-01T09:00:00.000Z";
const BIN = path.resolve(import.meta.dirname, "../../bin/ident.js");

function accepted(domain: string, name: string, entityType: string): EntityResult {
  return {
    entity: { status: "accepted", domain, network_id: `§:entity:${domain}`, entity_type: entityType, details: { name }, problems: [] },
    properties: [],
    credentials: [],
    connections: [],
    jsonld: null,
    cache: { fetched_at: AT, stale: false },
  };
}

const typed = (i: number) => `type${i}.example`;
const statused = (i: number) => `status${i}.example`;

/**
 * An entity per hostile value whose document says `"entity_type": value` (as a lookup records it),
 * and one whose status, a change of status and a claim's reason are that value (as `store import`
 * takes them: any text).
 */
async function fill(store: Store): Promise<void> {
  for (const [i, value] of HOSTILE.entries()) {
    await store.record(accepted(typed(i), `Hostile type ${i}`, value));
    await store.record(accepted(statused(i), `Hostile status ${i}`, "person"));
    await store.db.query("UPDATE entities SET status = $2 WHERE domain = $1", [statused(i), value]);
    await store.db.query("INSERT INTO changes (domain, kind, claim_key, at, status) VALUES ($1, 'entity', '', $2, $3)", [
      statused(i),
      LATER,
      value,
    ]);
    await store.db.query(
      "INSERT INTO changes (domain, kind, claim_key, id, at, verified, reason) VALUES ($1, 'credentials', 'c', '@me@issuer.example/card', $2, false, $3)",
      [statused(i), LATER, value],
    );
  }
}

describe("values named like Object's prototype members, recorded in the index", () => {
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "ident-hostile-keys-"));
    store = await openStore({ kind: "embedded", dataDir: path.join(dir, "data") });
    await fill(store);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the search page lists them: each entity type gives no badge, each status reads as itself", async () => {
    const page = await store.search("hostile");
    expect(page?.results).toHaveLength(2 * HOSTILE.length);
    const html = renderToStaticMarkup(createElement(IndexResults, { page: page!, cursor: null, now: new Date(LATER) }));
    for (const leak of LEAKS) expect(html).not.toContain(leak);
    for (const [i, value] of HOSTILE.entries()) {
      const typedHit = new RegExp(`<li[^>]*data-domain="${typed(i)}".*?</li>`, "s").exec(html)?.[0] ?? "";
      expect(typedHit).toContain("0 verified");
      expect(typedHit).not.toContain('class="badge badge-');
      const statusHit = new RegExp(`<li[^>]*data-domain="${statused(i)}".*?</li>`, "s").exec(html)?.[0] ?? "";
      expect(statusHit).toContain("Not verified");
      expect(statusHit).toContain(`<bdi>${value}</bdi>`);
    }
  });

  it("an entity's feed parses, and says the status and reason as text", async () => {
    for (const [i, value] of HOSTILE.entries()) {
      const found = await entityChanges(store.db, statused(i));
      const xml = atomFeed(found!.changes, {
        self: `https://resolver.example/entity/${statused(i)}/feed.xml`,
        page: `https://resolver.example/entity/${statused(i)}`,
        title: "changes",
        since: AT,
        entityPage: (d) => `https://resolver.example/entity/${d}`,
      });
      for (const leak of LEAKS) expect(xml).not.toContain(leak);
      expect(parseFeed(xml).items.map((item) => item.title)).toEqual([
        `Hostile status ${i}: Credential @me@issuer.example/card is no longer verified (not verified)`,
        `Hostile status ${i}: ${value}`,
        `Hostile status ${i}: the entity is accepted`,
      ]);
    }
  });

  it("`ident search` prints each status as itself", async () => {
    await store.close();
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [BIN, "search", "hostile"],
        { env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", IDENT_DATA_DIR: path.join(dir, "data") }, timeout: 60_000 },
        (err, out, errOut) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout: out, stderr: errOut }),
      );
    });
    store = await openStore({ kind: "embedded", dataDir: path.join(dir, "data") });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    for (const leak of LEAKS) expect(stdout).not.toContain(leak);
    for (const [i, value] of HOSTILE.entries()) {
      expect(stdout).toContain(`Hostile type ${i} [${typed(i)}] (${value}): 0 verified, 0 not verified;`);
      expect(stdout).toContain(`Hostile status ${i} [${statused(i)}] (person): ${value};`);
    }
  }, 90_000);
});
