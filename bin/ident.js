#!/usr/bin/env node
// The `ident` command (docs/decisions.md#interfaces): the CLI as `npm run build` bundled it
// (scripts/built.js), plain JavaScript. From a checkout without a build, or edited since its build,
// the TypeScript itself through tsx (a devDependency: a production install has the build).
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BUILT_CLI, builtFile } from "../scripts/built.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

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
