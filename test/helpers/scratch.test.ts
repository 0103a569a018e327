import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
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

  /**
   * A process that makes a scratch folder with a file in it, says where, and waits (a bench or a test
   * run in progress); `handles` gives it a SIGTERM handler of its own that exits a moment later, as a
   * server's graceful stop does. Resolves with its folder, and how it ended once sent `signal`.
   */
  function stopped(signal: NodeJS.Signals, handles: "no" | "on" | "once, first" = "no") {
    const helper = JSON.stringify(path.resolve("test/helpers/scratch.ts"));
    const graceful = `("SIGTERM", () => setTimeout(() => process.exit(5), 100));`;
    // "once, first": added with `once` before scratch.ts is loaded, so before its own listener.
    const code =
      `import { writeFileSync, mkdirSync } from "node:fs";` +
      (handles === "once, first" ? `process.once${graceful}` : "") +
      `const { scratchDir } = await import(${helper});` +
      (handles === "on" ? `process.on${graceful}` : "") +
      `const a = scratchDir("ident-scratch-test-"); mkdirSync(a + "/data"); writeFileSync(a + "/data/index", "x");` +
      `console.log(a); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
    return new Promise<{ dir: string; existedWhileRunning: boolean; code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      let out = "";
      let dir = "";
      let existed = false;
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk: string) => {
        out += chunk;
        if (dir || !out.includes("\n")) return;
        dir = out.trim();
        existed = existsSync(path.join(dir, "data", "index"));
        child.kill(signal);
      });
      child.on("exit", (code, sig) => resolve({ dir, existedWhileRunning: existed, code, signal: sig }));
    });
  }

  it("a run stopped by Ctrl-C (SIGINT), kill (SIGTERM) or a closed terminal (SIGHUP) removes its folders, and still ends by that signal", async () => {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      const run = await stopped(signal);
      expect(run.existedWhileRunning, signal).toBe(true);
      expect(existsSync(run.dir), `${signal}: ${run.dir}`).toBe(false);
      // Ended as the signal ends a process that does not handle it: whoever started it sees the signal.
      expect({ code: run.code, signal: run.signal }).toEqual({ code: null, signal });
    }
  });

  it("a process that handles SIGTERM itself (a graceful stop) goes on with it; its folders go when it exits", async () => {
    for (const handles of ["on", "once, first"] as const) {
      const run = await stopped("SIGTERM", handles);
      expect(run.existedWhileRunning, handles).toBe(true);
      expect({ code: run.code, signal: run.signal }, handles).toEqual({ code: 5, signal: null });
      expect(existsSync(run.dir), run.dir).toBe(false);
    }
  });

  it("a server the run started (endsWithRun) is stopped with SIGTERM when the run is stopped with kill", async () => {
    const helper = JSON.stringify(path.resolve("test/helpers/scratch.ts"));
    const code =
      `import { spawn } from "node:child_process"; import { endsWithRun } from ${helper};` +
      `const server = endsWithRun(spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" }));` +
      `console.log(server.pid); setInterval(() => {}, 1000);`;
    const run = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
    run.stdout.setEncoding("utf8");
    const pid = await new Promise<number>((resolve) => run.stdout.once("data", (chunk: string) => resolve(Number(chunk.trim()))));
    // Running: its /proc entry is there and not a zombie (an orphan waits there until init reaps it).
    const alive = (p: number) => {
      try {
        return readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
      } catch {
        return false;
      }
    };
    expect(alive(pid)).toBe(true);
    const ended = new Promise<NodeJS.Signals | null>((resolve) => run.once("exit", (_code, sig) => resolve(sig)));
    run.kill("SIGTERM");
    expect(await ended).toBe("SIGTERM");
    await expect.poll(() => alive(pid), { timeout: 5000 }).toBe(false);
  });

  it("SIGKILL, which no process can catch, leaves the folder (README.md says so); removed here by hand", async () => {
    const run = await stopped("SIGKILL");
    expect(run.signal).toBe("SIGKILL");
    expect(existsSync(run.dir), run.dir).toBe(true);
    rmSync(run.dir, { recursive: true, force: true });
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
