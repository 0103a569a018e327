// Builds the app when there is no build yet (the first `npm run demo` or `npm run fleet`), with
// Next's telemetry off: nothing leaves this machine from a build or a server of ours.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

export function buildOnce(root, who) {
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  if (existsSync(path.join(root, ".next", "BUILD_ID"))) return;
  console.log(`${who}: building the app (first run only)…`);
  const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");
  const build = spawnSync(process.execPath, [nextBin, "build"], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
