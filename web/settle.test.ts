import { describe, expect, it } from "vitest";
import { FAILED, orFailure } from "./settle";

describe("a streamed part settles whatever happens (web/settle.ts)", () => {
  it("passes a value through, and turns a throw into FAILED with one log line", async () => {
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    expect(await orFailure(Promise.resolve(3), "a claim's check", log)).toBe(3);
    expect(await orFailure(4, "a claim's check", log)).toBe(4);
    expect(await orFailure(Promise.reject(new Error("store down")), "an entity's lookup", log)).toBe(FAILED);
    expect(await orFailure(Promise.reject("odd"), "a lookup", log)).toBe(FAILED);
    expect(lines).toEqual(["page: an entity's lookup failed: store down", "page: a lookup failed: odd"]);
  });
});
