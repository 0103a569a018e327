/** The memory caps (web/memory-caps.ts): docs/architecture.md's table names each, with its value. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MEMORY_CAPS, type MemoryCapName } from "./memory-caps";

const doc = readFileSync(new URL("../docs/architecture.md", import.meta.url), "utf8");
const said = (cap: number, unit: "bytes" | "entries") =>
  unit === "bytes" ? `${cap / (1024 * 1024)} MiB` : `${cap.toLocaleString("en-US")} entries`;

describe("memory caps", () => {
  it.each(Object.keys(MEMORY_CAPS) as MemoryCapName[])("%s: a row of docs/architecture.md#memory-caps with its value", (name) => {
    const { cap, unit, in: where } = MEMORY_CAPS[name];
    const row = doc.split("\n").find((line) => line.startsWith(`| [\`${name}\`](../web/memory-caps.ts)`));
    expect(row, name).toBeDefined();
    expect(row).toContain(said(cap, unit));
    expect(row).toContain(where);
  });
});
