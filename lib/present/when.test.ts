import { describe, expect, it } from "vitest";
import type { Claim } from "../result/record.ts";
import type { Change } from "../store/verdicts.ts";
import { changeText, claimHistoryWords, exactly, when } from "./when.ts";

const NOW = new Date("2026-11-22T15:00:00.000Z");
const claim = (c: Partial<Claim>): Claim => ({ id: "§:property:x.example", verified: true, claimed: {}, problems: [], ...c });

describe("times from the index in words (docs/decisions.md#the-index)", () => {
  it("says a time today, yesterday, or the day", () => {
    expect(when("2026-11-22T09:12:00.000Z", NOW)).toBe("09:12 UTC");
    expect(when("2026-11-21T23:59:00.000Z", NOW)).toBe("yesterday");
    expect(when("2026-03-03T10:00:00.000Z", NOW)).toBe("3 March 2026");
    expect(when("not a date", NOW)).toBe("at an unknown time");
    expect(exactly("2026-03-03T10:05:00.000Z")).toBe("3 March 2026, 10:05 UTC");
  });

  it("a verified claim: verified since the start of its run", () => {
    const since = { first_seen_at: "2026-01-01T00:00:00Z", last_checked_at: NOW.toISOString(), verified_since: "2026-03-03T08:00:00Z" };
    expect(claimHistoryWords(claim({ since }), NOW)).toEqual({ text: "Verified since 3 March 2026", stale: null });
  });

  it("a failing claim: failing since, and when it was last verified, or never", () => {
    const since = { first_seen_at: "2026-01-01T00:00:00Z", last_checked_at: NOW.toISOString(), failing_since: "2026-11-22T09:12:00Z" };
    expect(claimHistoryWords(claim({ verified: false, reason: "not_listed", since }), NOW)?.text).toBe(
      "Failing since 09:12 UTC, never verified",
    );
    expect(
      claimHistoryWords(
        claim({ verified: false, reason: "not_listed", since: { ...since, last_verified_at: "2026-11-21T20:00:00Z" } }),
        NOW,
      )?.text,
    ).toBe("Failing since 09:12 UTC, last verified yesterday");
  });

  it("a claim not checked this time (a limit of this resolver): what the index knew, and when it last checked", () => {
    const verified = {
      first_seen_at: "2026-01-01T00:00:00Z",
      last_checked_at: "2026-11-21T20:00:00Z",
      verified_since: "2026-03-03T08:00:00Z",
    };
    const notChecked = { verified: false, reason: "limit" as const, not_checked: "query_budget" as const };
    expect(claimHistoryWords(claim({ ...notChecked, since: verified }), NOW)?.text).toBe(
      "Not checked this time; verified since 3 March 2026, last checked yesterday",
    );
    const failing = {
      first_seen_at: "2026-01-01T00:00:00Z",
      last_checked_at: "2026-11-22T09:12:00Z",
      failing_since: "2026-11-20T09:12:00Z",
    };
    expect(claimHistoryWords(claim({ ...notChecked, since: failing }), NOW)?.text).toBe(
      "Not checked this time; failing since 20 November 2026, last checked 09:12 UTC",
    );
  });

  it("stale on error: when it was last verified, why it could not be re-checked, and until when it is kept", () => {
    const since = { first_seen_at: "2026-01-01T00:00:00Z", last_checked_at: NOW.toISOString(), last_verified_at: "2026-11-22T06:00:00Z" };
    const words = claimHistoryWords(
      claim({ since, stale: { reason: "unreachable", message: "connect ECONNREFUSED", until: "2026-11-23T06:00:00.000Z" } }),
      NOW,
    );
    expect(words).toEqual({
      text: "Last verified 06:00 UTC",
      stale: "Could not be re-checked since then (the publisher could not be reached); kept as verified until 23 November 2026, 06:00 UTC.",
    });
  });

  it("nothing without an index", () => {
    expect(claimHistoryWords(claim({}), NOW)).toBeNull();
  });
});

describe("a recorded change in words, for the timeline (docs/decisions.md#rendering)", () => {
  const AT = "2026-11-22T09:12:00.000Z";
  const change = (c: Partial<Change>): Change => Object.assign({ at: AT, kind: "entity", id: null }, c) as Change;
  it.each([
    [{ status: "accepted" }, "Entity document accepted"],
    [{ status: "unreachable" }, "Entity document not accepted: the domain could not be reached"],
    [{}, "Entity document not accepted: unknown status"],
    [{ kind: "properties", id: "§:property:b.example", verified: true }, "Property §:property:b.example verified"],
    [
      { kind: "credentials", id: "@a@b.example", verified: false, reason: "not_listed" },
      "Credential @a@b.example not verified: the property does not name this entity as an owner",
    ],
    // An id as an index recorded it long ago: cleaned and cut as every surface shows it.
    [
      { kind: "connections", id: "https://x.example/\u0007\u001b\u007f\u0085\ufffe", verified: true },
      "Connection https://x.example/\ufffd\ufffd\ufffd\ufffd\ufffd verified",
    ],
    [
      { kind: "connections", id: `https://x.example/${"x".repeat(2000)}`, verified: true },
      `Connection https://x.example/${"x".repeat(281)}… verified`,
    ],
  ] as const)("%o → %s", (c, text) => expect(changeText(change(c))).toBe(text));

  // As an imported index may hold them: any text, named like a member of Object's prototype among them.
  it.each(["constructor", "__proto__", "toString", "hasOwnProperty"])("a status, reason or kind %j is said in neutral words", (value) => {
    expect(changeText(change({ status: value }))).toBe("Entity document not accepted: unknown status");
    expect(changeText(change({ kind: "connections", id: "https://x.example/", verified: false, reason: value }))).toBe(
      "Connection https://x.example/ not verified: not verified",
    );
    expect(changeText(change({ kind: value as Change["kind"], id: "x", verified: true }))).toBe("Claim x verified");
    expect(changeText(change({ kind: value as Change["kind"], id: "x", verified: false, reason: value }))).toBe(
      "Claim x not verified: not verified",
    );
  });
});
