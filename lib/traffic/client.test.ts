import { describe, expect, it } from "vitest";
import { clientKey } from "./client";

describe("clientKey: the rightmost trusted hop", () => {
  it.each([
    ["203.0.113.9", 0, "203.0.113.9"],
    ["1.1.1.1, 203.0.113.9", 0, "203.0.113.9"],
    ["spoofed, 198.51.100.7, 10.0.0.2", 1, "198.51.100.7"],
    ["spoofed, 198.51.100.7", 0, "198.51.100.7"],
    ["", 0, "unknown"],
    [null, 0, "unknown"],
  ] as const)("%j with %d trusted hops → %s", (xff, hops, expected) => {
    expect(clientKey(xff, hops)).toBe(expected);
  });
  it("a client cannot choose its key by writing X-Forwarded-For", () => {
    expect(clientKey("victim, 203.0.113.9", 0)).toBe("203.0.113.9");
  });
});
