// What `npm run build` makes for Node outside Next's bundle (scripts/build-node.js), as paths from
// the app's folder (docs/deploying.md#building), run with plain `node`: no TypeScript loader. No
// dependencies: bin/ident.js reads it in production, and web/serve.js may.
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** The folder of the built files (.gitignore'd). */
export const BUILT_DIR = "dist";
/** The CLI (cli/main.ts), a module exporting `run`: bin/ident.js runs it. */
export const BUILT_CLI = "dist/cli.js";
/** The configuration check `npm start` runs before the server (web/check-config.ts). */
export const BUILT_CHECK_CONFIG = "dist/check-config.js";
/** Each built file's sources, as the build read them: `{ "dist/cli.js": ["cli/main.ts", …] }`. */
export const BUILT_SOURCES = "dist/sources.json";

/**
 * The absolute path of the built `file` under the app's folder `root`; null when there is none, or
 * when a source it was built from has changed since (a checkout edited after its build).
 */
export function builtFile(root, file) {
  const target = path.join(root, file);
  if (!existsSync(target)) return null;
  try {
    const at = statSync(target).mtimeMs;
    const sources = JSON.parse(readFileSync(path.join(root, BUILT_SOURCES), "utf8"))[file];
    if (!Array.isArray(sources)) return null;
    return sources.every((source) => statSync(path.join(root, source)).mtimeMs <= at) ? target : null;
  } catch {
    return null;
  }
}
