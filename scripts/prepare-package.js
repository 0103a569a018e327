#!/usr/bin/env node
// Before the unit tests and the bench, outside their loopback-only namespace (scripts/loopback-only.sh):
// what the package's tests and figures need from the npm registry (docs/library.md#the-package): the
// tarball, a project outside the workspace with it installed, a Node project's types, and the other
// runtimes (test/runtimes/). Into .package-test/ (ignored by git); skipped while nothing in lib/ or
// this script is newer than the last preparation. `--force` prepares again all the same.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const PREPARED = path.join(root, ".package-test");
const READY = path.join(PREPARED, "ready.json");
const RUNTIMES = path.join(root, "test", "runtimes");
const npm = (args, cwd) =>
  execFileSync("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline"], { cwd, stdio: ["ignore", "ignore", "inherit"] });

/** The newest modification time among the package's sources and what prepares them, in ms. */
function newestSource() {
  const files = execFileSync("git", ["ls-files", "lib", "scripts/pack-resolver.js", "scripts/prepare-package.js"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);
  return Math.max(...files.map((f) => (existsSync(path.join(root, f)) ? statSync(path.join(root, f)).mtimeMs : 0)));
}

/** Bytes under `dir`, each file once. */
function duBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += duBytes(p);
    else if (entry.isFile()) total += statSync(p).size;
  }
  return total;
}

function prepare() {
  rmSync(PREPARED, { recursive: true, force: true });
  mkdirSync(PREPARED, { recursive: true });
  const tarball = execFileSync(process.execPath, [path.join(root, "scripts", "pack-resolver.js"), PREPARED], { encoding: "utf8" })
    .trim()
    .split("\n")
    .at(-1);
  const consumer = path.join(PREPARED, "consumer");
  mkdirSync(consumer);
  writeFileSync(path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  npm(["install", tarball], consumer);
  // What installing the tarball alone brought, measured before anything else is installed beside it.
  const modules = path.join(consumer, "node_modules");
  const names = readdirSync(modules).flatMap((n) => (n.startsWith("@") ? readdirSync(path.join(modules, n)).map((m) => `${n}/${m}`) : [n]));
  const installed = { names: names.filter((n) => n !== ".package-lock.json"), bytes: duBytes(modules) };
  // The conformance runner's optional peers, for the README's example of it (docs/library.md#conformance).
  npm(["install", "@peculiar/x509@^2", "reflect-metadata@^0.2"], consumer);
  // A Node project's own types, apart, for the consumer's typecheck.
  npm(["install", "--prefix", path.join(PREPARED, "types"), "@types/node@24"], root);
  if (!existsSync(path.join(RUNTIMES, "node_modules", "deno", "deno"))) npm(["ci"], RUNTIMES);
  writeFileSync(READY, `${JSON.stringify({ tarball, consumer, installed }, null, 2)}\n`);
}

/** What the preparation left: read by the tests and the bench. */
export function prepared() {
  if (!existsSync(READY)) throw new Error("the package is not prepared: node scripts/prepare-package.js (npm run test:unit runs it first)");
  if (statSync(READY).mtimeMs < newestSource())
    throw new Error("lib/ changed since the package was prepared: node scripts/prepare-package.js");
  return JSON.parse(readFileSync(READY, "utf8"));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const fresh = existsSync(READY) && statSync(READY).mtimeMs >= newestSource() && !process.argv.includes("--force");
  if (!fresh) {
    const started = Date.now();
    prepare();
    console.log(`prepare-package: ${path.relative(root, PREPARED)} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
}
