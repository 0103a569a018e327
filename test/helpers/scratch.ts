/**
 * Scratch folders for tests, benches and the servers they start: each made under the system's
 * temporary folder and removed when the process that made it exits, so that running the tests
 * again and again does not fill the disk with indexes nobody reads (README.md, "Tests and benchmarks").
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const made = new Set<string>();
process.once("exit", () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new empty folder named `{prefix}XXXXXX`, removed with everything in it when this process exits. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}
