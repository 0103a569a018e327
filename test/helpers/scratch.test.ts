import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startSampleNetwork } from "../network/server";
import { spawnSampleNetwork } from "../network/spawn";

/** Runs `code` (an ES module) in a new Node process that can import TypeScript: its exit code and standard output. */
function runModule(code: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], (err, stdout) =>
      resolve({ code: typeof err?.code === "number" ? err.code : err ? -1 : 0, stdout }),
    ),
  );
}

describe("scratch folders are removed by whoever made them", () => {
  it("a scratch folder and what was written in it are gone once the process that made it exits, by returning or by process.exit", async () => {
    const helper = JSON.stringify(path.resolve("test/helpers/scratch.ts"));
    for (const [ending, exitCode] of [
      ["", 0],
      ["process.exit(3);", 3],
    ] as const) {
      const code =
        `import { writeFileSync, mkdirSync } from "node:fs"; import { scratchDir } from ${helper};` +
        `const a = scratchDir("ident-scratch-test-"); const b = scratchDir("ident-scratch-test-");` +
        `mkdirSync(a + "/data"); writeFileSync(a + "/data/index", "x");` +
        `console.log(JSON.stringify([a, b])); ${ending}`;
      const ran = await runModule(code);
      expect(ran.code).toBe(exitCode);
      const made = JSON.parse(ran.stdout.trim()) as string[];
      expect(made).toHaveLength(2);
      for (const dir of made) expect(existsSync(dir), dir).toBe(false);
    }
  });

  it("the sample network's folder (its CA file) is removed when it closes, in this process or in its own", async () => {
    const net = await startSampleNetwork();
    const caFile = net.env.NODE_EXTRA_CA_CERTS;
    expect(existsSync(caFile)).toBe(true);
    await net.close();
    expect(existsSync(path.dirname(caFile))).toBe(false);

    const spawned = await spawnSampleNetwork();
    const spawnedCa = spawned.env.NODE_EXTRA_CA_CERTS;
    expect(existsSync(spawnedCa)).toBe(true);
    await spawned.stop();
    expect(existsSync(path.dirname(spawnedCa))).toBe(false);
  });
});
