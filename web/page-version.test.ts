/**
 * What an issuer's page is kept against (web/page-version.ts, docs/decisions.md#page-cache): its first
 * page, the credentials it lists, standing a few seconds; a later page, or an index that cannot be
 * read, is never kept.
 */
import { describe, expect, it } from "vitest";
import type { ConfiguredResolver } from "ident-resolver/setup";
import type { IssuedPage, Store } from "ident-resolver/store";
import { ISSUED_FRESH_MS, pageVersion, versionGeneration } from "./page-version";
import { classify, ROUTES } from "./routes";

const PAGE: IssuedPage = {
  credentials: [
    {
      id: "@alice@guild.example/members",
      title: "Member",
      holder: { domain: "alice.example", name: "Alice", status: "accepted" },
      verified: true,
      reason: null,
      last_checked_at: "2026-11-29T10:00:00.000Z",
    },
  ],
  next: null,
};

/** A resolver whose index lists `listed()` for any issuer, counting its reads. */
function resolverOf(listed: () => Promise<IssuedPage | null>, store = true) {
  const reads: (string | null | undefined)[] = [];
  const issuedBy = (issuer: string, cursor?: string | null) => {
    reads.push(cursor);
    return listed();
  };
  const resolver = {
    store: Promise.resolve(store ? ({ issuedBy } as unknown as Store) : null),
    probe: () => Promise.reject(new Error("no probe")),
  };
  return { resolver: resolver as unknown as Pick<ConfiguredResolver, "store" | "probe">, reads };
}

const after = Buffer.from(JSON.stringify([1, "alice.example", "k"])).toString("base64url");

describe("an issuer's page version", () => {
  it("is the credentials its first page lists, standing ISSUED_FRESH_MS; another list, another version", async () => {
    const { resolver } = resolverOf(async () => PAGE);
    const before = Date.now();
    const v = await pageVersion(resolver, classify("GET", "/issuer/guild.example"));
    expect(typeof v === "object" && v !== null && v.text.includes("@alice@guild.example/members")).toBe(true);
    expect(typeof v === "object" && v !== null && v.until >= before + ISSUED_FRESH_MS).toBe(true);
    const changed = resolverOf(async () => ({ ...PAGE, credentials: [{ ...PAGE.credentials[0]!, verified: false }] }));
    const w = await pageVersion(changed.resolver, classify("GET", "/issuer/guild.example"));
    expect(typeof w === "object" && w !== null && typeof v === "object" && v !== null && w.text !== v.text).toBe(true);
  });

  it("is none for a later page (never kept: read once each by a crawler), and reads nothing for it", async () => {
    const { resolver, reads } = resolverOf(async () => PAGE);
    expect(await pageVersion(resolver, classify("GET", `/issuer/guild.example?after=${after}`))).toBeNull();
    expect(reads).toEqual([]);
  });

  it("is none when the index cannot be read or there is none: the page is rendered, saying so", async () => {
    expect(
      await pageVersion(resolverOf(() => Promise.reject(new Error("gone"))).resolver, classify("GET", "/issuer/guild.example")),
    ).toBeNull();
    expect(await pageVersion(resolverOf(async () => PAGE, false).resolver, classify("GET", "/issuer/guild.example"))).toBeNull();
  });
});

describe("what moves a page's version", () => {
  it("is the document cache's generation for an answer; nothing for the home and issuer pages, read from the index", () => {
    let generation = 7;
    const resolver = { generation: () => generation };
    const answer = classify("GET", "/entity/alice.example");
    const [home, issuer] = [classify("GET", "/"), classify("GET", "/issuer/guild.example")];
    const before = [home, issuer].map((route) => versionGeneration(resolver, route));
    expect(versionGeneration(resolver, answer)).toBe(7);
    generation = 8;
    expect(versionGeneration(resolver, answer)).toBe(8);
    expect([home, issuer].map((route) => versionGeneration(resolver, route))).toEqual(before);
    // Every row with a version read from the index is one of the two above.
    const fromIndex = Object.entries(ROUTES).filter(([, row]) => row.version === "overview" || row.version === "issued");
    expect(fromIndex.map(([kind]) => kind).sort()).toEqual([home.kind, issuer.kind].sort());
  });
});
