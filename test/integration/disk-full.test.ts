/**
 * A full disk under the embedded store (docs/deploying.md#when-a-part-fails), for real: a 128 MB tmpfs
 * mounted in a user and mount namespace of its own (`unshare -rm`), so nothing outside it fills up.
 * Results answered while the disk is full wait and are recorded once there is space; none is lost
 * below the bound; a start on a full disk says so in words.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

type Fact = Record<string, unknown> & { step: string };

function inTmpfs(): Promise<Fact[]> {
  const root = mkdtempSync(path.join(tmpdir(), "ident-full-"));
  const script = path.resolve("test/helpers/fill-disk.mts");
  const command = `mount -t tmpfs -o size=128m tmpfs ${root} && exec ${process.execPath} --import tsx ${script} ${root}`;
  // The tmpfs lives and dies with its namespace; the empty folder it was mounted on goes afterwards.
  return new Promise<Fact[]>((resolve, reject) =>
    execFile("unshare", ["-rm", "sh", "-c", command], { timeout: 180_000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      rmSync(root, { recursive: true, force: true });
      if (err) return reject(new Error(`${err.message}\n${stderr}`));
      resolve(
        stdout
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as Fact),
      );
    }),
  );
}

describe("a full disk under the embedded store", () => {
  it("results wait while the disk is full, /readyz's state says `no space`, and every one is recorded once there is space; a start on a full disk says so", async () => {
    const facts = await inTmpfs();
    const step = (name: string): Record<string, unknown> => facts.find((f) => f.step === name) ?? {};
    const full = step("full");
    expect(full).toMatchObject({ state: "no space", dropped: 0 });
    expect(full["backlog"]).toBeGreaterThanOrEqual(20);
    // Every answered result is in the index once space came back: 0 lost.
    expect(step("freed")).toMatchObject({ recorded: full["answered"], state: "running", backlog: 0, dropped: 0 });
    expect(step("start")).toMatchObject({
      opened: false,
      message: expect.stringMatching(/^the disk holding .*fresh is full \(\d+ bytes free\): free some space/),
    });
    expect(step("log")["lines"]).toEqual([
      expect.stringMatching(/^store: the disk is full \(.*No space left on device.*\); results wait to be recorded until there is space$/),
      expect.stringMatching(/^store: results are recorded again; \d+ waiting results recorded$/),
    ]);
  }, 200_000);
});
