import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { extend, ownValue } from "./objects.ts";

// V8's own test of two objects' hidden classes, available once natives syntax is allowed.
setFlagsFromString("--allow-natives-syntax");
const sameMap = runInNewContext("(a, b) => %HaveSameMap(a, b)") as (a: object, b: object) => boolean;

describe("extend (docs/architecture.md#object-shapes)", () => {
  it("makes objects that share one hidden class, however many are made", () => {
    const base = { id: "x", verified: false, problems: [] as string[] };
    const made = Array.from({ length: 2000 }, (_, i) => extend(base, { since: i, reason: "limit" }));
    const classes = made.filter((o, i) => i > 0 && !sameMap(made[i - 1] ?? o, o)).length;
    expect(classes).toBe(0);
  });

  it("is the spread: later keys win, the base is not changed", () => {
    const base = { a: 1, b: 2 };
    expect(extend(base, { b: 3, c: 4 })).toEqual({ a: 1, b: 3, c: 4 });
    expect(base).toEqual({ a: 1, b: 2 });
  });

  it("the check can fail: it tells hidden classes apart", () => {
    const make = (i: number) => ({ id: "x", since: i });
    expect(sameMap(make(1), make(2))).toBe(true);
    expect(sameMap(make(1), { since: 1, id: "x" })).toBe(false);
  });
});

describe("ownValue (docs/decisions.md#rendering)", () => {
  const table: Record<string, string> = { person: "Person", organization: "Organization" };
  it.each([
    ["person", "Person"],
    ["organization", "Organization"],
    ["robot", undefined],
    ["", undefined],
    ["constructor", undefined],
    ["__proto__", undefined],
    ["toString", undefined],
    ["hasOwnProperty", undefined],
    ["valueOf", undefined],
    ["__defineGetter__", undefined],
  ])("%s → %s", (key, value) => expect(ownValue(table, key)).toBe(value));

  it("a key the table does hold is its value, even one named like a prototype member", () => {
    const named: Record<string, number> = Object.assign(Object.create(null) as Record<string, number>, { constructor: 1, toString: 2 });
    expect([ownValue(named, "constructor"), ownValue(named, "toString"), ownValue(named, "valueOf")]).toEqual([1, 2, undefined]);
  });
});
