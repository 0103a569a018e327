import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { builtStyleHashes, contentSecurityPolicy } from "./security-headers";

describe("the stylesheets Next puts inline are allowed by their hash, and nothing else is (docs/decisions.md#cold-pages)", () => {
  it("hashes every .css file under the build's static folder, nested ones too, and nothing else", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ident-css-"));
    mkdirSync(path.join(dir, "chunks", "deep"), { recursive: true });
    writeFileSync(path.join(dir, "chunks", "a.css"), "body{margin:0}");
    writeFileSync(path.join(dir, "chunks", "deep", "b.css"), ".x{color:red}");
    writeFileSync(path.join(dir, "chunks", "c.js"), "alert(1)");
    const sha = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
    const got = builtStyleHashes(dir).trim().split(" ");
    rmSync(dir, { recursive: true, force: true });
    expect(got.sort()).toEqual([sha("body{margin:0}"), sha(".x{color:red}")].sort());
  });
  it("no build: no hash, and the policy still names the nonce", () => {
    expect(builtStyleHashes(path.join(tmpdir(), "no-such-build-here"))).toBe("");
    expect(contentSecurityPolicy("abc", true)).toContain("style-src 'self' 'nonce-abc';");
  });
});
