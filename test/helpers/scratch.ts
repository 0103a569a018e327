/**
 * What a test or bench run leaves behind, gone when it ends (README.md, "Tests and benchmarks"):
 * scratch folders, each made under the system's temporary folder and removed when the process that
 * made it ends, so that running the tests and benches again and again does not fill the disk with
 * indexes nobody reads; and the servers it started, stopped with it. Ended by a signal as well:
 * Ctrl-C (SIGINT), `kill` (SIGTERM) or a closed terminal (SIGHUP); only SIGKILL, which no process
 * can catch, leaves them.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import path from "node:path";

const made = new Set<string>();
const stops = new Set<() => void>();

// What the run started is stopped first (a server may still write in its folder), then the folders go.
process.once("exit", () => {
  for (const stop of stops) {
    try {
      stop();
    } catch {
      // One that cannot be stopped does not keep the others, or the folders, from going.
    }
  }
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** The signals a person or a supervisor stops a run with. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * On a stop signal: a process that handles the signal itself (a server's graceful stop) goes on
 * with it, and what it leaves goes at its exit. One that does not, which the signal would have
 * ended at once without its "exit", exits now with the shell's status for that signal (128 + its
 * number: 130 for Ctrl-C), its "exit" hooks run.
 */
function onStop(signal: NodeJS.Signals) {
  const stop = () => {
    if (process.listenerCount(signal) > 1) return;
    process.exit(128 + constants.signals[signal]);
  };
  process.on(signal, stop);
}
for (const signal of STOP_SIGNALS) onStop(signal);

/** A new empty folder named `{prefix}XXXXXX`, removed with everything in it when this process ends. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/**
 * `stop` (synchronous) run when this process ends, before its scratch folders are removed; the
 * returned function forgets it, for a server stopped in the ordinary way.
 */
export function atRunEnd(stop: () => void): () => void {
  stops.add(stop);
  return () => void stops.delete(stop);
}

/**
 * `child` (a server this run started) sent `signal` when this process ends, unless it has ended
 * already: a bench stopped half-way leaves no server running with its folder gone.
 */
export function endsWithRun<T extends ChildProcess>(child: T, signal: NodeJS.Signals = "SIGTERM"): T {
  const forget = atRunEnd(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
  child.once("exit", forget);
  return child;
}
