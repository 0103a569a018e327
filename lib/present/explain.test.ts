import { describe, expect, it } from "vitest";
import { REASONS } from "../protocol/reasons";
import { reasonFix, statusFix } from "./explain";

describe("what the publisher can do", () => {
  it("states the configured timeout, not a fixed one", () => {
    expect(reasonFix("timeout", { fetchTimeoutMs: 6000 })).toContain("within 6 seconds");
    expect(statusFix("timeout", { fetchTimeoutMs: 2500 })).toContain("within 2.5 seconds");
    expect(reasonFix("timeout", { fetchTimeoutMs: 10_000 })).toContain("within 10 seconds");
  });
  it("has words for every reason", () => {
    for (const reason of REASONS) expect(reasonFix(reason, { fetchTimeoutMs: 10_000 })).toMatch(/^[A-Z].*\.$/);
  });
});
