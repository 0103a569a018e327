import { describe, expect, it } from "vitest";
import { claimCounts, claimKey, listedOnce } from "./claims.ts";

const P = (id: string | null, verified: boolean) => ({ id, verified });

describe("counting claims: each claim once (docs/decisions.md#counting-claims)", () => {
  const lists = {
    // One property listed twice, and once more in capitals (V6: the same id), and one that is unreachable.
    properties: [
      P("§:property:blog.example", true),
      P("§:property:blog.example", false),
      P("§:PROPERTY:BLOG.EXAMPLE", false),
      P("§:property:gone.example", false),
    ],
    credentials: [P("@alice@guild.example", true)],
    connections: [P(null, false), P(null, false)],
  };

  it("an entry repeating an earlier id of its kind, in any letter case, is the same claim: only its first listing counts", () => {
    expect(listedOnce(lists).map((c) => `${c.kind} ${c.index}`)).toEqual([
      "properties 0",
      "properties 3",
      "credentials 0",
      "connections 0",
      "connections 1",
    ]);
  });
  it("the badge's rule, the preview's and the index's: 1 of 2 for the duplicated property and the unreachable one", () => {
    expect(claimCounts({ properties: lists.properties, credentials: [], connections: [] })).toEqual({ verified: 1, total: 2 });
    expect(claimCounts(lists)).toEqual({ verified: 2, total: 5 });
  });
  it("an entry without an id is a claim of its own, keyed by its place", () => {
    expect([claimKey({ id: null }, 4), claimKey({ id: "§:Property:X.example" }, 0)]).toEqual(["#4", "§:property:x.example"]);
  });
  it("the same id under two kinds is two claims", () => {
    expect(claimCounts({ properties: [P("x", true)], credentials: [P("x", false)], connections: [] })).toEqual({ verified: 1, total: 2 });
  });
});
