#!/usr/bin/env node
// `npm run pack:resolver [-- <folder>]`: the resolver's package (lib/) as `npm pack` makes its tarball
// (docs/library.md#the-package). In this repository the package's exports are its TypeScript; the
// tarball carries JavaScript and declarations instead, compiled by lib/tsconfig.build.json, and a
// package.json whose exports name them. Prints the tarball's path.
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const lib = path.join(root, "lib");
const out = path.resolve(process.argv[2] ?? path.join(root, "dist", "package"));

/**
 * Paths that name a source file rather than import it, so the compiler cannot rewrite them: each
 * must match exactly once, so a renamed file fails the pack rather than the package.
 */
const REWRITES = [
  // The fetch thread's file (lib/fetch/thread.ts), compiled beside it.
  { file: "fetch/thread.js", from: 'new URL("./fetch-worker.ts", import.meta.url)', to: 'new URL("./fetch-worker.js", import.meta.url)' },
  // The package's own manifest (lib/version.ts), one folder up from dist/.
  { file: "version.js", from: 'from "./package.json"', to: 'from "../package.json"' },
];

/** The tarball's manifest: the workspace's, its exports pointed at the compiled files. */
function manifest() {
  const pkg = JSON.parse(readFileSync(path.join(lib, "package.json"), "utf8"));
  const exports = {};
  for (const [subpath, source] of Object.entries(pkg.exports)) {
    if (!source.endsWith(".ts")) exports[subpath] = source;
    else {
      const base = source.replace(/^\.\//, "./dist/").replace(/\.ts$/, "");
      exports[subpath] = { types: `${base}.d.ts`, default: `${base}.js` };
    }
  }
  return { ...pkg, exports, files: ["dist", "README.md", "CHANGELOG.md"] };
}

/** Every file under `dir`, as paths from it. */
const walk = (dir, from = "") =>
  readdirSync(path.join(dir, from), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(dir, path.join(from, e.name)) : [path.join(from, e.name)],
  );

const stage = mkdtempSync(path.join(os.tmpdir(), "ident-resolver-pack-"));
try {
  const dist = path.join(stage, "dist");
  const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", path.join(lib, "tsconfig.build.json"), "--outDir", dist], { stdio: "inherit" });
  // The compiler copies the manifest it read for lib/version.ts; the tarball's own is one folder up.
  rmSync(path.join(dist, "package.json"));
  for (const { file, from, to } of REWRITES) {
    const text = readFileSync(path.join(dist, file), "utf8");
    if (text.split(from).length !== 2) throw new Error(`pack-resolver: ${file} does not name ${from} exactly once`);
    writeFileSync(path.join(dist, file), text.replace(from, to));
  }
  // Declarations keep the sources' `.ts` in their imports; a consumer's TypeScript reads `.js` there.
  for (const file of walk(dist).filter((f) => f.endsWith(".d.ts"))) {
    const text = readFileSync(path.join(dist, file), "utf8");
    writeFileSync(path.join(dist, file), text.replace(/(from\s+|import\()"(\.{1,2}\/[^"]+)\.ts"/g, '$1"$2.js"'));
  }
  // The embedded engine is a process of its own, started from the file beside lib/store/db.ts.
  copyFileSync(path.join(lib, "store", "pglite-engine.mjs"), path.join(dist, "store", "pglite-engine.mjs"));
  writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(manifest(), null, 2)}\n`);
  for (const doc of ["README.md", "CHANGELOG.md"]) cpSync(path.join(lib, doc), path.join(stage, doc));
  mkdirSync(out, { recursive: true });
  const [packed] = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: stage, encoding: "utf8" }));
  console.log(path.join(out, packed.filename));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
