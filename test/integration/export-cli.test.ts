/**
 * Moving the index from the command line (docs/deploying.md#moving-the-index), as an operator runs
 * it: `ident store export` to a file, standard output, a pipe, a link or a folder; `ident store
 * import` of bad files, each refused in one line with its line number; against a store the app holds.
 */
import { execFileSync } from "node:child_process";
import { createReadStream, createWriteStream, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "ident-resolver/store";
import { newEmbeddedDir, useEngines } from "../helpers/engines";
import { fill, exported, withValue, entityLine, header, run } from "../helpers/export-fixtures";

const { engines: ENGINES, tempDir } = useEngines("exportcli");
const postgres = () => ENGINES.find((e) => e.name === "PostgreSQL")!;

// Each test starts the command three or four times, each opening an embedded engine: 17 s on a quiet
// machine, 30 s and more on a busy one (seen in CI), past the suite's 30 s default.
describe("the command line", { timeout: 90_000 }, () => {
  /** An embedded store in a folder of its own, filled, closed, and what its export holds. */
  const filledEmbedded = async () => {
    const dir = tempDir();
    const dataDir = newEmbeddedDir(dir);
    const source = await openStore({ kind: "embedded", dataDir });
    await fill(source);
    const expected = await exported(source);
    await source.close();
    return { dir, dataDir, expected };
  };

  it("export to a pipe writes into it (never a file put in its place); through a link, the file it names; to a folder, refused", async () => {
    const { dir, dataDir, expected } = await filledEmbedded();
    // A named pipe, as /dev/stdout or a FIFO into another command: a rename over it would replace it.
    const fifo = path.join(dir, "pipe");
    execFileSync("mkfifo", [fifo]);
    const chunks: Buffer[] = [];
    const reading = new Promise<void>((resolve, reject) =>
      createReadStream(fifo)
        .on("data", (c) => chunks.push(c as Buffer))
        .on("end", resolve)
        .on("error", reject),
    );
    const toPipe = await run(["store", "export", fifo], { IDENT_DATA_DIR: dataDir });
    await reading;
    expect(toPipe.code, toPipe.stderr).toBe(0);
    expect(Buffer.concat(chunks).toString("utf8")).toBe(expected);
    expect(statSync(fifo).isFIFO()).toBe(true);
    // A link to an older export: the file it names is replaced, the link stays.
    const real = path.join(dir, "real.ndjson");
    writeFileSync(real, "an older export\n");
    const link = path.join(dir, "latest.ndjson");
    symlinkSync(real, link);
    const toLink = await run(["store", "export", link], { IDENT_DATA_DIR: dataDir });
    expect(toLink.code, toLink.stderr).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, "utf8")).toBe(expected);
    const toFolder = await run(["store", "export", dir], { IDENT_DATA_DIR: dataDir });
    expect(toFolder.code).toBe(1);
    expect(toFolder.stderr).toBe(`ident: ${dir} is a folder: name a file to export to\n`);
  });

  it("export to a file and to standard output (the same bytes), import into PostgreSQL, and back", async () => {
    const { dir, dataDir, expected } = await filledEmbedded();
    const file = path.join(dir, "index.ndjson");
    const toFile = await run(["store", "export", file], { IDENT_DATA_DIR: dataDir });
    expect(toFile.code, toFile.stderr).toBe(0);
    expect(toFile.stderr).toMatch(
      /^ident: exported 65 entities \(\d+ claims, \d+ changes\) and \d+ jobs in [\d.]+ s to .*index\.ndjson\n$/,
    );
    expect(readFileSync(file, "utf8")).toBe(expected);
    const toStdout = await run(["store", "export"], { IDENT_DATA_DIR: dataDir });
    expect(toStdout.stdout).toBe(expected);
    const server = await postgres().location();
    if (server.kind !== "server") throw new Error("expected a server");
    const into = await run(["store", "import", file], { IDENT_DATABASE_URL: server.url });
    expect(into.code, into.stderr).toBe(0);
    expect(into.stderr).toMatch(
      /^ident: imported 65 entities \(\d+ claims, \d+ changes\) and \d+ jobs in [\d.]+ s \([\d,]+ entities\/s\)\n$/,
    );
    const again = await run(["store", "import", file], { IDENT_DATABASE_URL: server.url });
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      "ident: the store already holds 65 entities; import into an empty store, or give --merge to add the file's to them; nothing was imported\n",
    );
    expect((await run(["store", "import", file, "--merge"], { IDENT_DATABASE_URL: server.url })).code).toBe(0);
    expect((await run(["store", "export"], { IDENT_DATABASE_URL: server.url })).stdout).toBe(expected);
  }, 120_000);

  it("a bad file is refused in one line with its line number; an embedded store in use is refused in one line", async () => {
    const dir = tempDir();
    const bad = path.join(dir, "bad.ndjson");
    writeFileSync(bad, '{"schema":"ident-resolver/export@1","counts":{"entities":1,"claims":0,"changes":0,"jobs":0}}\n{"entity": 1}\n');
    const dataDir = path.join(dir, "data");
    const refused = await run(["store", "import", bad], { IDENT_DATA_DIR: dataDir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^ident: \S+bad\.ndjson line 2: not a valid entity \(.*\); nothing was imported\n$/);
    const held = await openStore({ kind: "embedded", dataDir });
    try {
      const inUse = await run(["store", "export"], { IDENT_DATA_DIR: dataDir });
      expect(inUse.code).toBe(1);
      expect(inUse.stderr.trim().split("\n")).toHaveLength(1);
      expect(inUse.stderr).toMatch(/^ident: the store cannot be opened: .*in use/);
    } finally {
      await held.close();
    }
    expect((await run(["store", "import"], {})).code).toBe(2);
    expect((await run(["store", "export"], { IDENT_DATA_DIR: path.join(dir, "none") })).stderr).toMatch(/there is no index in/);
  }, 120_000);

  it("a bad line refused by the engine before (a number past its integer, a NUL, details nested 10,000 deep) is one line with its number", async () => {
    const { dir, expected } = await filledEmbedded();
    const lines = expected.split("\n");
    const e = lines.findIndex((l) => l.includes('"domain":"e000.example"'));
    const files = {
      integer: withValue(expected, e, ["entity", "failed_checks"], 2 ** 31),
      nul: lines.map((l, i) => (i === e ? l.replace('"name":"', '"name":"\\u0000') : l)).join("\n"),
      deep: lines
        .map((l, i) => (i === e ? l.replace('"details":{', `"details":{"x":${"[".repeat(10_000)}${"]".repeat(10_000)},`) : l))
        .join("\n"),
    };
    for (const [name, text] of Object.entries(files)) {
      const file = path.join(dir, `${name}.ndjson`);
      writeFileSync(file, text);
      const into = await run(["store", "import", file], { IDENT_DATA_DIR: path.join(dir, `into-${name}`) });
      expect(into.code, name).toBe(1);
      expect(into.stderr, name).toMatch(new RegExp(`^ident: \\S+${name}\\.ndjson line ${e + 1}: [^\\n]+; nothing was imported\\n$`));
    }
  }, 120_000);

  it("a byte-order mark before the first line is skipped", async () => {
    const { dir, expected } = await filledEmbedded();
    const file = path.join(dir, "bom.ndjson");
    writeFileSync(file, `\ufeff${expected}`);
    const dataDir = path.join(dir, "into");
    const into = await run(["store", "import", file], { IDENT_DATA_DIR: dataDir });
    expect(into.code, into.stderr).toBe(0);
    expect((await run(["store", "export"], { IDENT_DATA_DIR: dataDir })).stdout).toBe(expected);
  }, 120_000);

  it("a pipe that never ends, whose first line says 1 entity, is refused at line 3 and read no further", async () => {
    const dir = tempDir();
    const fifo = path.join(dir, "endless");
    execFileSync("mkfifo", [fifo]);
    // Entities for as long as the pipe is read (at most 200,000: a test ends).
    const writer = createWriteStream(fifo);
    let open = true;
    let wake: () => void = () => undefined;
    const closed = () => {
      open = false;
      wake();
    };
    writer.on("error", closed);
    writer.on("close", closed);
    writer.on("drain", () => wake());
    let wrote = 0;
    const feeding = (async () => {
      writer.write(`${header({ entities: 1 })}\n`);
      for (; open && wrote < 200_000; wrote++)
        if (!writer.write(`${entityLine(`f${String(wrote).padStart(6, "0")}.example`)}\n`))
          await new Promise<void>((resolve) => (wake = resolve));
      writer.destroy();
    })();
    const into = await run(["store", "import", fifo], { IDENT_DATA_DIR: path.join(dir, "data") });
    await feeding;
    expect(into.code).toBe(1);
    expect(into.stderr).toMatch(/^ident: \S+endless line 3: more entities than the 1 its first line says: [^\n]+; nothing was imported\n$/);
    expect(wrote).toBeLessThan(200_000);
  }, 120_000);
});
