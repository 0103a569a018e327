#!/usr/bin/env node
// The `ident` command (docs/decisions.md#interfaces): runs the TypeScript CLI through tsx, no build step.
import { register } from "tsx/esm/api";

register();
const { run } = await import("../cli/main.ts");
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
