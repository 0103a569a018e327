#!/usr/bin/env node
// `npm run pack:resolver [-- <folder>]`: the resolver's package (lib/) as `npm pack` makes its tarball
// (docs/library.md#the-package). In this repository the package's exports are its TypeScript; the
// tarball carries JavaScript and declarations instead: lib/tsconfig.build.json compiles each module
// with its declarations, then esbuild bundles the compiled entries, their shared code split into
// chunks (an import of the Node entry loads a few files rather than 190: docs/library.md#figures),
// and the manifest's exports name them. Prints the tarball's path.
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const lib = path.join(root, "lib");
const out = path.resolve(process.argv[2] ?? path.join(root, "dist", "package"));

/**
 * Paths that name a file beside the module rather than import it: in the bundle the module is in a
 * chunk, so each is found from the package's own name instead (self-reference through the exports
 * below). Each must match exactly once, so a renamed file fails the pack rather than the package.
 */
const REWRITES = [
  // The fetch thread's file (lib/fetch/thread.ts).
  {
    file: "fetch/thread.js",
    from: 'new URL("./fetch-worker.ts", import.meta.url)',
    to: 'new URL(import.meta.resolve("ident-resolver/fetch-worker"))',
  },
  // The embedded engine's file (lib/store/db.ts).
  {
    file: "store/db.js",
    from: 'new URL("./pglite-engine.mjs", import.meta.url)',
    to: 'new URL(import.meta.resolve("ident-resolver/pglite-engine"))',
  },
];

/** Files the package finds by its own name (REWRITES): exported, and never entries of its API. */
const OWN_FILES = {
  "./fetch-worker": { types: "./dist/fetch/fetch-worker.d.ts", default: "./dist/fetch/fetch-worker.js" },
  "./pglite-engine": { types: "./dist/store/pglite-engine.d.mts", default: "./dist/store/pglite-engine.mjs" },
};

/**
 * Dependencies stay in node_modules, but zod's runtime is bundled: zod 4 is about a hundred modules,
 * and loading them was most of the package's import time (docs/library.md#figures). zod stays a
 * dependency, for the types the declarations name.
 */
const dependenciesExternal = {
  name: "dependencies-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (/^zod(\/|$)/.test(args.path) ? undefined : { path: args.path, external: true }));
    // zod's `locales` namespace holds its messages in some fifty languages, half of its runtime
    // and of the time it takes to load; the package never selects one (zod's own default is English,
    // which stays), so the namespace is bundled holding English alone.
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}`)
        ? { path: path.join(path.dirname(args.importer), "..", "locales", "en.js"), namespace: "zod-english" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-english" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: path.dirname(args.path),
    }));
  },
};

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
  return { ...pkg, exports: { ...exports, ...OWN_FILES }, files: ["dist", "README.md", "CHANGELOG.md"] };
}

/** Every file under `dir`, as paths from it. */
const walk = (dir, from = "") =>
  readdirSync(path.join(dir, from), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(dir, path.join(from, e.name)) : [path.join(from, e.name)],
  );

const stage = mkdtempSync(path.join(os.tmpdir(), "ident-resolver-pack-"));
try {
  const compiled = path.join(stage, "compiled");
  const dist = path.join(stage, "dist");
  const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", path.join(lib, "tsconfig.build.json"), "--outDir", compiled], { stdio: "inherit" });
  for (const { file, from, to } of REWRITES) {
    const text = readFileSync(path.join(compiled, file), "utf8");
    if (text.split(from).length !== 2) throw new Error(`pack-resolver: ${file} does not name ${from} exactly once`);
    writeFileSync(path.join(compiled, file), text.replace(from, to));
  }
  // Each entry where its declarations are (dist/store/index.js beside dist/store/index.d.ts), and the fetch thread's file.
  const entries = [...Object.values(JSON.parse(readFileSync(path.join(lib, "package.json"), "utf8")).exports), "./fetch/fetch-worker.ts"]
    .filter((source) => source.endsWith(".ts"))
    .map((source) => ({ in: path.join(compiled, source.replace(/\.ts$/, ".js")), out: source.replace(/^\.\//, "").replace(/\.ts$/, "") }));
  await build({
    entryPoints: entries,
    outdir: dist,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    plugins: [dependenciesExternal],
    // The compiled modules are staged outside the repository: zod is found in its node_modules.
    nodePaths: [path.join(root, "node_modules")],
    chunkNames: "chunks/[name]-[hash]",
    // Whitespace and syntax only: names are kept for stack traces.
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: "warning",
  });
  // Declarations keep the sources' `.ts` in their imports; a consumer's TypeScript reads `.js` there.
  for (const file of walk(compiled).filter((f) => f.endsWith(".d.ts"))) {
    const text = readFileSync(path.join(compiled, file), "utf8");
    mkdirSync(path.dirname(path.join(dist, file)), { recursive: true });
    writeFileSync(path.join(dist, file), text.replace(/(from\s+|import\()"(\.{1,2}\/[^"]+)\.ts"/g, '$1"$2.js"'));
  }
  // The embedded engine is a process of its own, started from its file (lib/store/db.ts).
  copyFileSync(path.join(lib, "store", "pglite-engine.mjs"), path.join(dist, "store", "pglite-engine.mjs"));
  writeFileSync(
    path.join(dist, "store", "pglite-engine.d.mts"),
    "// A process of its own (lib/store/db.ts): it exports nothing.\nexport {};\n",
  );
  rmSync(compiled, { recursive: true });
  writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(manifest(), null, 2)}\n`);
  for (const doc of ["README.md", "CHANGELOG.md"]) cpSync(path.join(lib, doc), path.join(stage, doc));
  mkdirSync(out, { recursive: true });
  const [packed] = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: stage, encoding: "utf8" }));
  console.log(path.join(out, packed.filename));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
