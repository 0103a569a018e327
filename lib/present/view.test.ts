import { describe, expect, it } from "vitest";
import type { Claim, EntityResult } from "../result/record.ts";
import { claimView, entityView } from "./view.ts";

const SETTINGS = { fetchTimeoutMs: 10_000, now: new Date("2026-05-01T08:00:00.000Z") };
const claim = (claimed: unknown, verified = false): Claim =>
  Object.assign({ id: "§:property:b.example", verified, claimed, problems: [] }, verified ? {} : { reason: "not_listed" as const });

describe("view models of untrusted values named like Object's prototype members (docs/decisions.md#rendering)", () => {
  it.each(["constructor", "__proto__", "toString", "hasOwnProperty"])("a claim whose type or name is %j shows it as text", (value) => {
    const view = claimView("property", claim({ id: "§:property:b.example", name: value, type: value }), SETTINGS);
    expect([view.title, view.type]).toEqual([value, value]);
    expect(view.reason?.text).toBe("the property does not name this entity as an owner");
  });

  it("a claimed entry's `__proto__` field lends it nothing: only its own fields are shown", () => {
    const claimed: unknown = JSON.parse('{"id": "§:property:b.example", "__proto__": {"name": "Borrowed", "description": "Borrowed too"}}');
    for (const kind of ["property", "credential"] as const) {
      const view = claimView(kind, claim(claimed), SETTINGS);
      expect(view.title, kind).toBe("§:property:b.example");
      expect(view.description, kind).toBeNull();
    }
  });

  it.each(["constructor", "__proto__", "toString", "hasOwnProperty"])("an entity of type %j has no badge", (value) => {
    const entity: EntityResult["entity"] = {
      status: "accepted",
      domain: "a.example",
      entity_type: value,
      details: { name: "A" },
      problems: [],
    };
    const view = entityView(entity, { fetched_at: "2026-05-01T08:00:00.000Z", stale: false }, SETTINGS);
    expect([view.badge, view.statusText, view.name]).toEqual([null, "accepted", "A"]);
  });
});

describe("what a claim's card shows of long publisher text (docs/decisions.md#rendering)", () => {
  it("its type as a label of 60 characters, its description's start (500) and its technical detail's start (300)", () => {
    const failed: Claim = {
      id: "§:property:b.example",
      verified: false,
      reason: "unreachable",
      claimed: { id: "§:property:b.example", name: "n".repeat(300), type: "t".repeat(300), description: "d".repeat(5000) },
      problems: [{ code: "unreachable", severity: "error", message: "could not be reached", detail: `DNS:${"x".repeat(1990)}` }],
    };
    const view = claimView("property", failed, SETTINGS);
    expect(view.title).toBe("n".repeat(300));
    expect(view.type).toBe(`${"t".repeat(59)}…`);
    expect(view.description).toBe(`${"d".repeat(499)}…`);
    expect(view.reason?.technical).toBe(`DNS:${"x".repeat(295)}…`);
    // Short text is shown whole.
    const short = claimView(
      "property",
      { ...failed, claimed: { type: "website" }, problems: [{ ...failed.problems[0]!, detail: "ECONNREFUSED" }] },
      SETTINGS,
    );
    expect([short.type, short.reason?.technical]).toEqual(["website", "ECONNREFUSED"]);
  });
});
