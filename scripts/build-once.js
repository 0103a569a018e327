// Builds the app when there is no build yet (the first `npm run demo` or `npm run fleet`), with
// Next's telemetry off: nothing leaves this machine from a build or a server of ours. What runs
// outside Next (scripts/build-node.js, a fraction of a second) is built again whenever its sources changed.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { BUILT_CHECK_CONFIG, BUILT_CLI, builtFile } from "./built.js";

export function buildOnce(root, who) {
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  const step = (args) => {
    const build = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
    if (build.status !== 0) process.exit(build.status ?? 1);
  };
  if (!existsSync(path.join(root, ".next", "BUILD_ID"))) {
    console.log(`${who}: building the app (first run only)…`);
    step([path.join(root, "node_modules", "next", "dist", "bin", "next"), "build"]);
  }
  if (!builtFile(root, BUILT_CLI) || !builtFile(root, BUILT_CHECK_CONFIG)) step([path.join(root, "scripts", "build-node.js")]);
}
