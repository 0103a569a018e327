/**
 * `npx ident` runs what `npm run build` bundled when it is there and up to date with its sources
 * (scripts/built.js, docs/deploying.md#building), and the TypeScript through tsx otherwise: a
 * checkout without a build, or edited since. Tried on a folder of its own holding bin/ident.js and
 * scripts/built.js as they are, a fake CLI built and one in source, each saying which it is.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BUILT_CLI, BUILT_SOURCES, builtFile } from "../../scripts/built.js";
import { SERVER_NODE_FLAGS } from "../../scripts/server-flags.js";

const repo = path.resolve(import.meta.dirname, "../..");
const folders: string[] = [];
afterAll(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A checkout of the command alone; with `built`, a build of it; with `tsx`, the dev dependencies. */
function checkout(options: { built: boolean; tsx: boolean }): string {
  const root = mkdtempSync(path.join(tmpdir(), "ident-built-"));
  folders.push(root);
  for (const file of ["bin/ident.js", "scripts/built.js", "scripts/server-flags.js"])
    cpSync(path.join(repo, file), path.join(root, file), { recursive: true });
  mkdirSync(path.join(root, "cli"));
  const cli = (from: string) =>
    `export async function run(args${from === "source" ? ": string[]" : ""}) { console.log("${from}", args.join(" ")); return 0; }\n`;
  writeFileSync(path.join(root, "cli", "main.ts"), cli("source"));
  if (options.built) {
    mkdirSync(path.join(root, "dist"));
    writeFileSync(path.join(root, BUILT_CLI), cli("built"));
    writeFileSync(path.join(root, BUILT_SOURCES), JSON.stringify({ [BUILT_CLI]: ["cli/main.ts"] }));
    // Built after its sources, as `npm run build` does; an edit comes later still.
    const ago = (s: number) => new Date(Date.now() - s * 1000);
    utimesSync(path.join(root, "cli", "main.ts"), ago(60), ago(60));
    utimesSync(path.join(root, BUILT_CLI), ago(30), ago(30));
  }
  if (options.tsx) {
    mkdirSync(path.join(root, "node_modules"));
    for (const name of ["tsx", "esbuild", "@esbuild", "get-tsconfig", "resolve-pkg-maps"]) {
      symlinkSync(path.join(repo, "node_modules", name), path.join(root, "node_modules", name));
    }
  }
  return root;
}

const ident = (root: string, args = ["--version"]) =>
  new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      [path.join(root, "bin", "ident.js"), ...args],
      { env: { NODE_ENV: "test", PATH: process.env.PATH ?? "" } },
      (err, out, errOut) => (err ? reject(new Error(errOut)) : resolve(out.trim())),
    ),
  );
const edit = (root: string) =>
  writeFileSync(
    path.join(root, "cli", "main.ts"),
    `${"// edited\n"}export async function run() { console.log("source, edited"); return 0; }\n`,
  );

describe("which CLI `npx ident` runs", () => {
  it("the build, when it is there and none of its sources changed since: no TypeScript loader needed", async () => {
    const root = checkout({ built: true, tsx: false });
    expect(builtFile(root, BUILT_CLI)).toBe(path.join(root, BUILT_CLI));
    expect(await ident(root)).toBe("built --version");
  });
  it("the sources through tsx, in a checkout without a build or edited since its build", async () => {
    expect(await ident(checkout({ built: false, tsx: true }))).toBe("source --version");
    const edited = checkout({ built: true, tsx: true });
    edit(edited);
    expect(builtFile(edited, BUILT_CLI)).toBeNull();
    expect(await ident(edited)).toBe("source, edited");
  });
  it("the build it has, older than its sources, where there is no tsx to load them (a production install)", async () => {
    const root = checkout({ built: true, tsx: false });
    edit(root);
    expect(await ident(root)).toBe("built --version");
  });
  it("a store command (an import, an export) runs again in its own process with the server's cap on the young generation; any other as it was started", async () => {
    const root = checkout({ built: true, tsx: false });
    // The built CLI says its process and its Node flags.
    writeFileSync(
      path.join(root, BUILT_CLI),
      `export async function run(args) { console.log(JSON.stringify({ pid: process.pid, ppid: process.ppid, flags: process.execArgv, args })); return 0; }\n`,
    );
    const said = async (args: string[]) =>
      JSON.parse(await ident(root, args)) as { pid: number; ppid: number; flags: string[]; args: string[] };
    const store = await said(["store", "import", "a file"]);
    expect(store.flags).toEqual(SERVER_NODE_FLAGS);
    expect(store.args).toEqual(["store", "import", "a file"]);
    expect(store.ppid).toBe(process.pid); // the same process as was started, not a child of it
    expect((await said(["--json", "store", "export"])).flags).toEqual(SERVER_NODE_FLAGS);
    expect((await said(["search", "store"])).flags).toEqual([]);
  });
  it("no build without the list of its sources", () => {
    const root = checkout({ built: true, tsx: false });
    rmSync(path.join(root, BUILT_SOURCES));
    expect(builtFile(root, BUILT_CLI)).toBeNull();
  });
});
