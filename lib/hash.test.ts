import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "./hash.ts";

describe("sha256Hex", () => {
  it("hashes as node:crypto does, a lone surrogate included, so keys hashed before are hashed the same", () => {
    for (const text of ["", "abc", "é漢字🙂", "a\uD800b", "\uDFFFx", "x".repeat(5000)]) {
      expect(sha256Hex(text)).toBe(createHash("sha256").update(text).digest("hex"));
    }
  });
});
