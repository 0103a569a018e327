/** The package's version (docs/library.md#versions): one number, said in the manifest, the changelog and every record. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RESOLVER, VERSION } from "ident-resolver";
import manifest from "ident-resolver/package.json" with { type: "json" };

const LIB = path.resolve(import.meta.dirname, "../../lib");

describe("the package's version", () => {
  it("is the manifest's, in the User-Agent and in every record's `resolver`", () => {
    expect(VERSION).toBe(manifest.version);
    expect(RESOLVER).toEqual({ name: "ident-resolver", version: manifest.version });
  });
  it("has its section in lib/CHANGELOG.md, the newest first: a version is not raised without saying what changed", () => {
    const sections = [...readFileSync(path.join(LIB, "CHANGELOG.md"), "utf8").matchAll(/^## (\S+)$/gm)].map((m) => m[1]);
    expect(sections[0]).toBe(manifest.version);
  });
});
