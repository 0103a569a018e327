#!/usr/bin/env node
// `npm run build`, after `next build`: bundles for Node what runs outside Next's bundle, so that a
// production install (`npm ci --omit=dev`) needs no TypeScript loader (docs/deploying.md#building):
// the CLI and the configuration check `npm start` runs first (scripts/built.js names both). The
// fetch thread is not among them: Next compiles lib/fetch/fetch-worker.ts into chunks of its own
// (lib/fetch/thread.ts). Packages stay in node_modules, imported as the app's own code imports them,
// all but the resolver's own (below).
import { build } from "esbuild";
import { copyFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { BUILT_CHECK_CONFIG, BUILT_CLI, BUILT_DIR, BUILT_SOURCES } from "./built.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const from = (file) => path.join(root, file);
const ENTRIES = { [BUILT_CLI]: "cli/main.ts", [BUILT_CHECK_CONFIG]: "web/check-config.ts" };

/**
 * Packages stay in node_modules, except the resolver's own (lib/, the workspace package
 * `ident-resolver`): its exports are TypeScript in this repository, so it is bundled (docs/library.md).
 */
const dependenciesExternal = {
  name: "dependencies-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      /^ident-resolver(\/|$)/.test(args.path) ? undefined : { path: args.path, external: true },
    );
  },
};

rmSync(from(BUILT_DIR), { recursive: true, force: true });
const started = performance.now();
const { metafile } = await build({
  entryPoints: Object.entries(ENTRIES).map(([out, source]) => ({
    in: from(source),
    out: path.relative(BUILT_DIR, out).replace(/\.js$/, ""),
  })),
  outdir: from(BUILT_DIR),
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  plugins: [dependenciesExternal],
  sourcemap: "linked",
  metafile: true,
  logLevel: "warning",
});
// The embedded store's engine is a process of its own, started from the file beside its module
// (lib/store/db.ts): so, beside the bundles that hold that module.
copyFileSync(from("lib/store/pglite-engine.mjs"), from(path.join(BUILT_DIR, "pglite-engine.mjs")));
// What each was built from, so that a checkout edited since runs its sources instead (bin/ident.js).
const sources = {};
for (const [out, built] of Object.entries(metafile.outputs)) {
  if (built.entryPoint) sources[out] = [...Object.keys(built.inputs), "lib/store/pglite-engine.mjs", "package.json"];
}
writeFileSync(from(BUILT_SOURCES), `${JSON.stringify(sources, null, 2)}\n`);
console.log(`build-node: ${Object.keys(sources).join(", ")} in ${Math.round(performance.now() - started)} ms`);
