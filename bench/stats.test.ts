import { describe, expect, it } from "vitest";
import { median, spread } from "./stats";

describe("median", () => {
  it.each([
    [[], NaN],
    [[3], 3],
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
  ])("median(%j) = %d", (xs, m) => {
    expect(median(xs)).toBe(m);
  });
});

describe("spread", () => {
  it.each([
    [[], NaN, NaN],
    [[3], 3, 3],
    [[4, 1, 3, 2], 1, 4],
  ])("spread(%j) = %d–%d", (xs, min, max) => {
    expect(spread(xs)).toEqual({ min, max });
  });
});
