/**
 * What a test or bench run leaves behind, gone when it ends (README.md, "Tests and benchmarks"):
 * scratch folders, each made under the system's temporary folder and removed when the process that
 * made it ends, so that running the tests and benches again and again does not fill the disk with
 * indexes nobody reads; and the servers it started, sent their stop with it. Ended by a signal as
 * well: Ctrl-C (SIGINT), `kill` (SIGTERM) or a closed terminal (SIGHUP); SIGKILL, which no process
 * can catch, leaves them, and so may a test runner that ends its workers its own way.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import path from "node:path";

const made = new Set<string>();
const stops = new Set<() => void>();

/**
 * What this run leaves, at its end: what it started, sent its stop, the last started first (a server
 * before the database it uses), then its folders. Neither a stop nor a folder that fails (a server
 * still writing in it) keeps the others, or the process's other "exit" listeners, from their turn.
 */
function leave() {
  for (const stop of [...stops].reverse()) {
    try {
      stop();
    } catch {
      // Said by the stop's own process, if anywhere; the run is ending.
    }
  }
  stops.clear();
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Left for the next person to remove by hand (README.md says so).
    }
  }
  made.clear();
}
process.once("exit", leave);

/**
 * On a stop signal (Ctrl-C, `kill`, a closed terminal), a process with no handler of its own would
 * end at once, without "exit". Here it runs its "exit" listeners first (the one above, and other
 * modules': Playwright's ends its browser), then ends by the same signal, as it would have: whoever
 * started it sees the signal (bash stops a script whose child died of Ctrl-C). A process that handles
 * the signal itself (a server's graceful stop) goes on with it, and what it leaves goes at its exit.
 * This listener goes first, so that the count sees every other one (one added with `once` removes
 * itself before it is called).
 */
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  const onSignal = () => {
    if (process.listenerCount(signal) > 1) return;
    process.removeListener(signal, onSignal);
    process.emit("exit", 128 + constants.signals[signal]);
    process.kill(process.pid, signal);
  };
  process.prependListener(signal, onSignal);
}

/** A new empty folder named `{prefix}XXXXXX`, removed with everything in it when this process ends. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/**
 * `stop` (synchronous) run when this process ends, before its scratch folders are removed, the last
 * added first; the returned function forgets it, for a server stopped in the ordinary way.
 */
export function atRunEnd(stop: () => void): () => void {
  stops.add(stop);
  return () => void stops.delete(stop);
}

/**
 * `child` (a server this run started) sent `signal` when this process ends, unless it has ended
 * already: a bench stopped half-way does not leave its servers running.
 */
export function endsWithRun<T extends ChildProcess>(child: T, signal: NodeJS.Signals = "SIGTERM"): T {
  const forget = atRunEnd(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
  child.once("exit", forget);
  return child;
}
