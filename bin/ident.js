#!/usr/bin/env node
// The `ident` command (docs/decisions.md#interfaces): the CLI as `npm run build` bundled it
// (scripts/built.js), plain JavaScript. From a checkout without a build, or edited since its build,
// the TypeScript itself through tsx (a devDependency: a production install has the build).
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BUILT_CLI, builtFile } from "../scripts/built.js";
import { SERVER_NODE_FLAGS } from "../scripts/server-flags.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

// docs/deploying.md#how-fast-and-how-much-memory: `ident store import` and `export` run for minutes
// through millions of short-lived rows, and Node 24's young generation, 128 MB unless capped at
// start, was most of their peak RSS (an import of 200,000: 274 MB, 180–188 MB capped, as fast). A V8
// flag the heap is sized by cannot be set once it runs, so these commands run again in this same
// process (execve: the same pid, signals and streams) with the server's flags: not once they are
// there, nor where the young generation's size is already given, nor under a debugger (it would
// start again), nor under Bun (its engine is not V8); elsewhere than Linux and macOS, or where Node
// has no execve, they run uncapped.
const long = process.argv.slice(2).find((arg) => !arg.startsWith("-")) === "store";
const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
const given =
  SERVER_NODE_FLAGS.every((flag) => flags.includes(flag)) ||
  flags.some((arg) => arg.startsWith("--max-semi-space-size") || arg.startsWith("--inspect"));
const node = typeof process.execve === "function" && process.platform !== "win32" && !process.versions.bun;
if (long && !given && node) {
  const self = fileURLToPath(import.meta.url);
  process.execve(
    process.execPath,
    [process.execPath, ...process.execArgv, ...SERVER_NODE_FLAGS, self, ...process.argv.slice(2)],
    process.env,
  );
}

/** The CLI's `run`: built, or from source when tsx is there to load it, or built though older than its sources. */
async function cli() {
  const built = builtFile(root, BUILT_CLI);
  if (built) return (await import(pathToFileURL(built).href)).run;
  let tsx;
  try {
    tsx = await import("tsx/esm/api");
  } catch {
    const stale = path.join(root, BUILT_CLI);
    return (await import(pathToFileURL(stale).href)).run;
  }
  tsx.register();
  return (await import("../cli/main.ts")).run;
}

const run = await cli();
const write = (stream) => (text) => new Promise((resolve) => stream.write(text, resolve));
const out = [];
const code = await run(process.argv.slice(2), process.env, {
  out: (t) => out.push(write(process.stdout)(t)),
  err: (t) => out.push(write(process.stderr)(t)),
  // Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
  color: process.stdout.isTTY === true && !process.env.NO_COLOR,
  stdout: process.stdout,
  progress: process.stderr.isTTY === true,
});
await Promise.all(out);
process.exitCode = code;
