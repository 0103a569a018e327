/**
 * The resolver's package as someone who installs it gets it (docs/library.md#the-package): the
 * tarball `npm pack` makes, checked by publint and arethetypeswrong, installed into a project outside
 * the workspace, typechecked under `nodenext` and `bundler`, its README's examples run as written on
 * Node 24, Node 22, Bun and Deno against the sample network, and its core bundled for a browser.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reasonText } from "ident-resolver";
import { CASES } from "ident-resolver/conformance";
import { PREPARED, prepared } from "../../scripts/prepare-package.js";
import { useSampleNetwork } from "../helpers/sample";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const RUNTIMES_DIR = path.join(ROOT, "test/runtimes");
const bin = (name: string) => path.join(ROOT, "node_modules/.bin", name);

/** What a consumer's install may never bring (docs/library.md#the-package): the web app's own. */
const WEB_PACKAGES = ["next", "react", "react-dom", "satori", "@resvg/resvg-js", "geist", "badge-maker", "@twemoji/svg"];

/** The core's bundle for a browser, minified and gzipped, at most (docs/library.md#figures). */
const CORE_BUDGET_GZIP_BYTES = 128 * 1024;

const ctx = useSampleNetwork();
let work: string;
let tarball: string;
let consumer: string;
/** What installing the tarball alone brought: the packages, and their bytes. */
let installed: { names: string[]; bytes: number };

/**
 * Run on each runtime: a name that resolves to loopback, fetched by the guarded fetcher the package
 * picks there and by undici's: the guard holds, or the fetcher refuses in words (docs/library.md#runtimes).
 */
const GUARD_SCRIPT = `
import { createFetcher, guardedFetcher, runtime } from "ident-resolver/node";
const resolve = async () => [{ address: "127.0.0.1", family: 4 }];
const said = (o) => [o.status, o.message];
const undici = createFetcher({ resolve });
const out = { runtime: runtime(), guarded: said(await guardedFetcher({ resolve })("https://alice.example/ident.json", "json")), undici: said(await undici("https://alice.example/ident.json", "json")) };
await undici.close();
console.log(JSON.stringify(out));
`;

/** The README's `js` code blocks, in order. */
function readmeExamples(): string[] {
  const readme = readFileSync(path.join(ROOT, "lib/README.md"), "utf8");
  return [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
}

/** The runtimes besides this Node (test/runtimes/package.json, installed by scripts/prepare-package.js). */
function runtimes(): Record<string, string[]> {
  const modules = path.join(RUNTIMES_DIR, "node_modules");
  return {
    "Node 24": [process.execPath],
    "Node 22": [path.join(modules, "node22/bin/node")],
    Bun: [path.join(modules, "bun/bin/bun.exe")],
    Deno: [path.join(modules, "deno/deno"), "run", "--allow-all", "--quiet"],
  };
}

beforeAll(() => {
  // The tarball, installed from the npm registry before the tests enter their loopback-only namespace.
  ({ tarball, consumer, installed } = prepared());
  work = mkdtempSync(path.join(tmpdir(), "ident-package-"));
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the package's tarball", () => {
  it("publint finds nothing", async () => {
    const { messages } = await publint({ pack: { tarball: readFileSync(tarball).buffer }, level: "suggestion", strict: true });
    const pkg = JSON.parse(readFileSync(path.join(consumer, "node_modules/ident-resolver/package.json"), "utf8"));
    expect(messages.map((m) => formatMessage(m, pkg))).toEqual([]);
  });
  it("arethetypeswrong finds nothing, as an ESM-only package", async () => {
    // The `esm-only` profile leaves out CommonJS's resolutions, which an ESM-only package cannot serve.
    const checked = await run(bin("attw"), [tarball, "--profile", "esm-only", "--format", "table-flipped"], { timeout: 120_000 }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
    );
    expect(checked, checked.stdout).toMatchObject({ code: 0 });
  });
  it("installing it brings no web dependency, and what it brings is printed", () => {
    expect(installed.names.filter((n) => WEB_PACKAGES.includes(n) || n.startsWith("@expo-google-fonts/"))).toEqual([]);
    const mb = installed.bytes / 1e6;
    console.log(
      `package: installed with its dependencies, ${mb.toFixed(1)} MB (${installed.names.length} packages); tarball ${statSync(tarball).size} bytes`,
    );
    expect(installed.names).toContain("ident-resolver");
  });
});

describe("a consumer outside the workspace", () => {
  it.each(["nodenext", "bundler"])("typechecks the README's examples with moduleResolution %s", async (resolution) => {
    const dir = path.join(consumer, `types-${resolution}`);
    mkdirSync(dir, { recursive: true });
    readmeExamples().forEach((code, i) => writeFileSync(path.join(dir, `example-${i}.ts`), code));
    const module = resolution === "nodenext" ? "nodenext" : "esnext";
    const tsconfig = {
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "es2022",
        module,
        moduleResolution: resolution,
        lib: ["es2023", "dom"],
        types: ["node"],
        typeRoots: [path.join(PREPARED, "types/node_modules/@types")],
      },
      include: ["*.ts"],
    };
    writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify(tsconfig));
    // No `skipLibCheck`: the package's declarations, and its dependencies', are checked too.
    const checked = await run(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], {
      timeout: 120_000,
    }).catch((err: { stdout: string }) => ({ stdout: err.stdout }));
    expect(checked.stdout).toBe("");
  });

  it("runs the README's examples as written on Node 24, Node 22, Bun and Deno, resolving on the sample network, the address guard holding on each", async () => {
    const examples = readmeExamples();
    examples.forEach((code, i) => writeFileSync(path.join(consumer, `example-${i}.mjs`), code));
    const caFile = path.join(work, "ca.pem");
    writeFileSync(caFile, ctx.net.caPem);
    const env = {
      NODE_ENV: "production" as const,
      PATH: process.env.PATH ?? "",
      HOME: work,
      IDENT_CONNECT_TO: ctx.net.connectTo,
      NODE_EXTRA_CA_CERTS: caFile,
      NO_COLOR: "1",
    };
    writeFileSync(path.join(consumer, "guard.mjs"), GUARD_SCRIPT);
    const outputs: Record<string, string[]> = {};
    const guards: Record<string, { runtime: string; guarded: string[]; undici: string[] }> = {};
    for (const [name, [exe, ...args]] of Object.entries(runtimes())) {
      guards[name] = JSON.parse((await run(exe ?? "", [...args, "guard.mjs"], { cwd: consumer, env, timeout: 60_000 })).stdout);
      outputs[name] = [];
      for (let i = 0; i < examples.length; i++) {
        const { stdout } = await run(exe ?? "", [...args, `example-${i}.mjs`], { cwd: consumer, env, timeout: 60_000 });
        outputs[name].push(stdout);
      }
    }
    for (const [name, out] of Object.entries(outputs)) {
      expect(out[0], name).toContain("alice.example: accepted");
      expect(out[0], name).toContain("§:property:blog.alice.example: verified");
      expect(out[1], name).toBe(`${reasonText("not_claimed")}\n`);
      expect(out[2], name).toBe("ready to publish\n");
      expect(out[3], name).toBe(`${CASES.length} of ${CASES.length} cases pass\n`);
    }
    const blocked = ["blocked", "alice.example resolves to 127.0.0.1, which is not a public address"];
    expect(guards).toEqual({
      "Node 24": { runtime: "node", guarded: blocked, undici: blocked },
      "Node 22": { runtime: "node", guarded: blocked, undici: blocked },
      Bun: { runtime: "bun", guarded: blocked, undici: ["blocked", expect.stringContaining("address guard cannot hold on Bun")] },
      Deno: { runtime: "deno", guarded: blocked, undici: ["blocked", expect.stringContaining("address guard cannot hold on Deno")] },
    });
    // The same words on every runtime.
    expect(new Set(Object.values(outputs).map((o) => o.join("")))).toHaveProperty("size", 1);
  }, 300_000);
  it("imports the Node entry without loading what only a fetch needs: node:tls, node:net, node:zlib, node:dns, crypto", async () => {
    const code = `const before = new Set(process.moduleLoadList);
await import("ident-resolver/node");
const loaded = process.moduleLoadList.filter((m) => !before.has(m) && m.startsWith("NativeModule ")).map((m) => m.slice(13));
process.stdout.write(JSON.stringify(loaded)); // after: a pipe's stdout loads node:net`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", code], { cwd: consumer, timeout: 60_000 });
    const loaded: string[] = JSON.parse(stdout);
    expect(loaded).toContain("worker_threads"); // the probe sees what the import loads
    expect(loaded.filter((m) => /^(tls|net|zlib|dns|crypto)$|^internal\/(tls|crypto|dns)\//.test(m))).toEqual([]);
  });
});

describe("the core", () => {
  it("bundles for a browser with no Node shim, within its budget", async () => {
    const entry = path.join(consumer, "browser.mjs");
    writeFileSync(entry, 'export { createResolver, reasonText } from "ident-resolver";\n');
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      platform: "browser",
      format: "esm",
      minify: true,
      write: false,
      logLevel: "silent",
    });
    const code = result.outputFiles[0]?.contents ?? new Uint8Array();
    const gzip = gzipSync(code).byteLength;
    console.log(
      `package: the core bundled for a browser, ${code.byteLength} bytes minified, ${gzip} gzipped (budget ${CORE_BUDGET_GZIP_BYTES})`,
    );
    expect(gzip).toBeLessThanOrEqual(CORE_BUDGET_GZIP_BYTES);
  });
});
