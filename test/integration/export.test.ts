/**
 * Moving the index (docs/deploying.md#moving-the-index): export and import on the embedded store and
 * a real PostgreSQL server, a round trip embedded → PostgreSQL → embedded that keeps every entity,
 * claim, time, change and queued job (the three files are byte for byte the same), bad files refused
 * with their line and nothing written, a store that holds entities refused unless merging, and the
 * command line as an operator runs it, including against a store the app holds.
 */
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, lstatSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linesOf } from "../../cli/store";
import type { Claim, EntityResult } from "../../lib/result/record";
import { openStore, type Store, type StoreLocation } from "../../lib/store";
import {
  bytesAfter,
  exportIndex,
  ImportError,
  importIndex,
  StoreNotEmpty,
  type ExportEntity,
  type NumberedLine,
} from "../../lib/store/export";
import { useEngines } from "../helpers/engines";

const HOUR = 3600_000;
const T0 = Date.parse("2026-04-01T10:00:00.000Z");
const at = (hours: number) => new Date(T0 + hours * HOUR).toISOString();
const BIN = path.resolve(import.meta.dirname, "../../bin/ident.js");

type Spec = { id: string; verified: boolean; title?: string };
function result(
  domain: string,
  when: string,
  name: string,
  claims: Spec[],
  status: EntityResult["entity"]["status"] = "accepted",
): EntityResult {
  const claim = (c: Spec): Claim => ({
    id: c.id,
    verified: c.verified,
    ...(c.verified ? {} : { reason: "not_listed" as const }),
    claimed: { id: c.id, ...(c.title ? { title: c.title, name: c.title } : {}) },
    problems: [],
  });
  const props = claims.filter((c) => c.id.startsWith("§:property:"));
  const creds = claims.filter((c) => c.id.startsWith("@"));
  return {
    entity: {
      status,
      domain,
      network_id: `§:entity:${domain}`,
      entity_type: "person",
      details: { name, description: `${name}'s site` },
      problems: [],
    },
    properties: status === "accepted" ? props.map(claim) : [],
    credentials: status === "accepted" ? creds.map(claim) : [],
    connections: [],
    jsonld: null,
    cache: { fetched_at: when, stale: false },
  };
}

/** What COPY's text format escapes or could mistake (tab, newline, carriage return, backslash, `\N`), and quotes. */
const HOSTILE = 'Tab\there "quoted" back\\slash \\N new\nline cr\r end';

/** An index with turns of verdict, a rejected entity, names from several scripts and hostile ones, and queued jobs. */
async function fill(store: Store): Promise<void> {
  const names = ["Ærøskøbing Bjørn", "Zoë Ünal", "محمد", "山田 太郎", "Alice \ud800 Moreau"];
  for (let i = 0; i < 60; i++) {
    const d = `e${String(i).padStart(3, "0")}.example`;
    const claims: Spec[] = [
      { id: `§:property:blog.${d}`, verified: true, title: `Blog ${i}` },
      { id: `@e${i}@guild.example/members`, verified: i % 3 !== 0, title: "Member" },
    ];
    await store.record(result(d, at(0), names[i % names.length] ?? "x", claims));
    if (i % 4 === 0)
      await store.record(
        result(
          d,
          at(1),
          names[i % names.length] ?? "x",
          claims.map((c) => ({ ...c, verified: !c.verified })),
        ),
      );
  }
  await store.record(result("Z-last.example".toLowerCase(), at(2), "Last", [], "rejected"));
  await store.record(result("a-b.example", at(2), "Hyphen", []));
  // A name that is COPY's null, a name of everything COPY escapes, and a domain that SQL must quote (the last: the
  // export asks for what comes after it).
  await store.record(
    result("null-name.example", at(2), "\\N", [{ id: "§:property:blog.null-name.example", verified: false, title: "\\N" }]),
  );
  await store.record(result("zz-o'neil\\x.example", at(2), HOSTILE, [{ id: "@o@guild.example/members", verified: true, title: HOSTILE }]));
  await store.record(result("ab.example", at(2), "No hyphen", []));
  // Byte order where JavaScript's < differs: U+FF21 (3 bytes) before U+1F642 (4 bytes; a surrogate pair).
  await store.record(result("\uff21-wide.example", at(2), "Wide", []));
  await store.record(result("\u{1f642}-smile.example", at(2), "Smile", []));
  await store.db.query(
    `INSERT INTO crawl_queue (domain, reason, priority, due_at, backoff_s, attempts, queued_at, locked_until)
     VALUES ('queued-one.example', 'discovered', 1, $1, 0, 0, $1, NULL), ('queued-two.example', 'recheck', 2, $2, 3600, 2, $1, $2)
     ON CONFLICT (domain) DO NOTHING`,
    [at(3), at(4)],
  );
}

async function exported(store: Store, batch?: number): Promise<string> {
  let text = "";
  await exportIndex(
    store.db,
    (line) => {
      text += line;
    },
    undefined,
    batch,
  );
  return text;
}

async function* linesOfText(text: string): AsyncGenerator<NumberedLine> {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  let n = 0;
  for (const line of lines) yield { n: ++n, text: line };
}

const load = (store: Store, text: string, merge = false, batch?: number) => importIndex(store.db, linesOfText(text), { merge, batch });

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const count = async (store: Store, table: string) => (await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]?.n;

const { engines: ENGINES, tempDir, database } = useEngines("export");
const pglite = () => ENGINES.find((e) => e.name === "PGlite")!;
const postgres = () => ENGINES.find((e) => e.name === "PostgreSQL")!;

describe("the round trip embedded → PostgreSQL → embedded", () => {
  const stores: Store[] = [];
  afterAll(() => Promise.all(stores.map((s) => s.close())));
  const fresh = async (where: StoreLocation) => {
    const s = await openStore(where);
    stores.push(s);
    return s;
  };
  let first = "";

  it("keeps every entity, claim, time, change and queued job: the three files are the same bytes", async () => {
    const embedded = await fresh(await pglite().location());
    await fill(embedded);
    first = await exported(embedded);
    const server = await fresh(await postgres().location());
    const intoServer = await load(server, first);
    const second = await exported(server);
    const back = await fresh(await pglite().location());
    await load(back, second);
    const third = await exported(back);
    expect(sha(second)).toBe(sha(first));
    expect(sha(third)).toBe(sha(first));
    const header = JSON.parse(first.split("\n")[0]!);
    expect(header.counts).toEqual({
      entities: 67,
      claims: await count(embedded, "claims"),
      changes: await count(embedded, "changes"),
      jobs: await count(embedded, "crawl_queue"),
    });
    expect(intoServer).toMatchObject({
      entities: 67,
      kept: 0,
      claims: header.counts.claims,
      changes: header.counts.changes,
      jobs: header.counts.jobs,
    });
    for (const table of ["entities", "claims", "changes", "crawl_queue"])
      expect(await count(back, table)).toBe(await count(embedded, table));
  }, 120_000);

  it("what the file says: domains in byte order, times in UTC, a claim's times and an entity's changes oldest first", () => {
    const lines = first
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const domains = lines.filter((l) => l.entity).map((l) => l.entity.domain as string);
    expect(domains).toEqual([...domains].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
    expect(domains.indexOf("\uff21-wide.example")).toBeLessThan(domains.indexOf("\u{1f642}-smile.example"));
    // Byte order, whatever the server's locale: "a-b" before "ab".
    expect(domains.indexOf("a-b.example")).toBeLessThan(domains.indexOf("ab.example"));
    const e000 = lines.find((l) => l.entity?.domain === "e000.example");
    expect(e000.entity).toMatchObject({ first_seen_at: at(0), last_checked_at: at(1), name: "Ærøskøbing Bjørn" });
    expect(e000.changes.map((c: { at: string }) => c.at)).toEqual([at(0), at(0), at(0), at(1), at(1)]);
    expect(e000.claims.map((c: { kind: string }) => c.kind)).toEqual(["credentials", "properties"]);
    expect(e000.claims[1]).toMatchObject({ kind: "properties", first_seen_at: at(0), last_checked_at: at(1) });
    const jobs = lines.filter((l) => l.job).map((l) => l.job);
    expect(jobs.find((j) => j.domain === "queued-two.example")).toEqual({
      domain: "queued-two.example",
      reason: "recheck",
      priority: 2,
      due_at: at(4),
      backoff_s: 3600,
      attempts: 2,
      queued_at: at(3),
    });
    // A lone surrogate a publisher sent is kept as U+FFFD, as the pages show it.
    expect(first).toContain("Alice \ufffd Moreau");
    // Text COPY escapes, and a name that is its null, come out as they went in.
    expect(lines.find((l) => l.entity?.domain === "null-name.example")).toMatchObject({
      entity: { name: "\\N" },
      claims: [{ label: "\\N" }],
    });
    expect(lines.find((l) => l.entity?.domain === "zz-o'neil\\x.example")).toMatchObject({
      entity: { name: HOSTILE, details: { name: HOSTILE } },
      claims: [{ label: HOSTILE }],
    });
  });

  it("batches of any size give the same file, from a server whose collation is not byte order too", async () => {
    // A database whose text sorts by ICU's en-US rules ("a" before "B"), and batches of 4 and 5 that
    // cut the file everywhere: each batch starts where the one before ended, in byte order.
    const url = await database("exporticu");
    const icuName = `${new URL(url).pathname.slice(1)}_icu`;
    const admin = new pg.Client(url);
    await admin.connect();
    await admin.query(`CREATE DATABASE ${icuName} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
    await admin.end();
    const icu = await fresh({ kind: "server", url: Object.assign(new URL(url), { pathname: `/${icuName}` }).toString() });
    await load(icu, first, false, 5);
    expect(sha(await exported(icu, 4))).toBe(sha(first));
    expect(sha(await exported(stores[0]!, 3))).toBe(sha(first));
  }, 120_000);

  it("the imported index searches as the one it came from", async () => {
    const back = stores.at(-1)!;
    const source = stores[0]!;
    for (const q of ["bjorn", "aeroskobing", "zoe unal", "山田", "blog 7", "member"]) {
      const [a, b] = [await source.search(q), await back.search(q)];
      expect(
        b?.results.map((r) => r.domain),
        q,
      ).toEqual(a?.results.map((r) => r.domain));
    }
    expect((await back.search("bjorn"))?.results.length).toBeGreaterThan(0);
    expect(await back.history("e000.example")).toEqual(await source.history("e000.example"));
  });
});

describe("what the index keeps, and so exports", () => {
  it("a name and a description longer than the pages show are recorded as the pages show them: the index still moves", async () => {
    const embedded = await openStore(await pglite().location());
    const server = await openStore(await postgres().location());
    try {
      const long = result("long.example", at(0), "N".repeat(400), []);
      long.entity.details = { name: "N".repeat(400), description: "word ".repeat(2000), location: "Here" };
      await embedded.record(long);
      const text = await exported(embedded);
      const line = JSON.parse(text.split("\n")[1]!) as ExportEntity;
      expect([...line.entity.name!]).toHaveLength(300);
      expect(line.entity.name).toBe(`${"N".repeat(299)}…`);
      expect(line.entity.details).toEqual({
        name: line.entity.name,
        description: `${"word ".repeat(2000).slice(0, 4999)}…`,
        location: "Here",
      });
      expect(line.entity.description).toBe(line.entity.details.description);
      await load(server, text);
      expect(await exported(server)).toBe(text);
    } finally {
      await Promise.all([embedded.close(), server.close()]);
    }
  }, 60_000);
});

describe("byte order, the file's", () => {
  it("is UTF-8's: code points, not JavaScript's UTF-16 units", () => {
    expect(bytesAfter("b", "a")).toBe(true);
    expect(bytesAfter("ab", "a")).toBe(true);
    expect(bytesAfter("a", "a")).toBe(false);
    expect(bytesAfter("a-b", "ab")).toBe(false);
    // U+1F642 is a surrogate pair (0xD83D…) in JavaScript, below U+FF21; in UTF-8 it comes after.
    expect(bytesAfter("\u{1f642}", "\uff21")).toBe(true);
    expect(bytesAfter("\uff21", "\u{1f642}")).toBe(false);
    expect(bytesAfter("\u{1f643}", "\u{1f642}")).toBe(true);
  });
});

describe("the file's lines, as the command reads them", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "ident-lines-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const read = async (text: string, maxChars?: number) => {
    const file = path.join(dir, "f.ndjson");
    writeFileSync(file, text);
    const out: NumberedLine[] = [];
    for await (const line of linesOf(file, maxChars)) out.push(line);
    return out;
  };

  it("numbered from 1, a carriage return before a newline dropped, the last line with or without its newline", async () => {
    expect(await read('{"a":1}\r\n{"b":2}\n\n{"c":3}')).toEqual([
      { n: 1, text: '{"a":1}' },
      { n: 2, text: '{"b":2}' },
      { n: 3, text: "" },
      { n: 4, text: '{"c":3}' },
    ]);
    expect(await read("x\n")).toEqual([{ n: 1, text: "x" }]);
    expect(await read("")).toEqual([]);
  });

  it("lines across the reads of the file (1 MB each) and characters cut between them come whole", async () => {
    const long = "é".repeat(700_000); // 1.4 MB of UTF-8: every read ends inside a line, some inside a character
    const lines = await read(`${long}\n${long}x\ny\n`);
    expect(lines.map((l) => [l.n, l.text.length])).toEqual([
      [1, long.length],
      [2, long.length + 1],
      [3, 1],
    ]);
    expect(lines[0]?.text).toBe(long);
  });

  it("a line longer than the limit is refused with its number before it is held whole", async () => {
    const limit = 1000;
    expect((await read(`a\n${"b".repeat(limit)}\n`, limit)).map((l) => l.text.length)).toEqual([1, limit]);
    const refusal = await read(`a\nb\n${"c".repeat(3_000_000)}\nd\n`, limit).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refusal).toBeInstanceOf(ImportError);
    expect((refusal as ImportError).line).toBe(3);
    expect((refusal as ImportError).message).toMatch(/^line 3: a line longer than 1,000 characters/);
    // Without a newline at all (a file that is one long line).
    const one = await read("z".repeat(2_500_000), limit).then(
      () => null,
      (e: unknown) => (e as ImportError).line,
    );
    expect(one).toBe(1);
  });
});

describe.each(ENGINES)("refusals on $name", ({ location }) => {
  let store: Store;
  let file = "";
  beforeAll(async () => {
    const source = await openStore(await location());
    await fill(source);
    file = await exported(source);
    await source.close();
    store = await openStore(await location());
  }, 120_000);
  afterAll(() => store?.close());

  const refused = async (text: string) => {
    const error = await load(store, text).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ImportError);
    expect(await count(store, "entities")).toBe(0);
    return (error as ImportError).message;
  };
  const lines = () => file.split("\n");

  it("another schema", async () => {
    const other = [JSON.stringify({ schema: "ident-resolver/export@2", counts: {} }), ...lines().slice(1)].join("\n");
    expect(await refused(other)).toBe('line 1: the file is "ident-resolver/export@2", not ident-resolver/export@1');
  });
  it("a file cut short in the middle of a line", async () => {
    expect(await refused(file.slice(0, Math.floor(file.length / 2)))).toMatch(/^line \d+: not valid JSON \(the file may be cut short\)$/);
  });
  it("a file cut short at the end of a line: its counts say so", async () => {
    expect(await refused(`${lines().slice(0, 20).join("\n")}\n`)).toMatch(
      /the file holds 19 entities where its first line says 67: it is cut short/,
    );
  });
  it("a malformed line, with its number", async () => {
    const bad = lines();
    bad[7] = "{nope";
    expect(await refused(bad.join("\n"))).toBe("line 8: not valid JSON (the file may be cut short)");
  });
  it("a line that fails validation: a time that is not one, a claim of an unknown kind", async () => {
    const bad = lines();
    const line = JSON.parse(bad[5]!);
    line.entity.last_checked_at = "yesterday";
    bad[5] = JSON.stringify(line);
    expect(await refused(bad.join("\n"))).toMatch(/^line 6: not a valid entity \(entity\.last_checked_at: /);
    const kind = lines();
    const other = JSON.parse(kind[3]!);
    other.claims[0].kind = "friends";
    kind[3] = JSON.stringify(other);
    expect(await refused(kind.join("\n"))).toMatch(/^line 4: not a valid entity \(claims\.0\.kind: /);
  });
  it("an entity twice, or out of order", async () => {
    const twice = lines();
    twice.splice(4, 0, twice[3]!);
    expect(await refused(twice.join("\n"))).toMatch(/^line 5: \S+ is out of domain order, or there twice$/);
  });
  it("a store with no entity but queued seeds takes the file: its jobs join the seeds, a domain queued twice keeps the earlier due time", async () => {
    const seeded = await openStore(await location());
    try {
      await seeded.db.query(
        `INSERT INTO crawl_queue (domain, reason, priority, due_at, backoff_s, attempts, queued_at)
         VALUES ('queued-one.example', 'seed', 0, $1, 0, 0, $1), ('seed-only.example', 'seed', 0, $1, 0, 0, $1)`,
        [at(-5)],
      );
      await load(seeded, file);
      const rows = await seeded.db.query<{ domain: string; due_at: Date }>(
        "SELECT domain, due_at FROM crawl_queue WHERE domain IN ('queued-one.example', 'seed-only.example') ORDER BY domain",
      );
      expect(rows.map((r) => [r.domain, new Date(r.due_at).toISOString()])).toEqual([
        ["queued-one.example", at(-5)],
        ["seed-only.example", at(-5)],
      ]);
      expect(await count(seeded, "crawl_queue")).toBe(JSON.parse(lines()[0]!).counts.jobs + 1);
    } finally {
      await seeded.close();
    }
  });
  it("a store that holds entities, unless merging; merged, the later check of each entity stays", async () => {
    await load(store, file);
    await expect(load(store, file)).rejects.toBeInstanceOf(StoreNotEmpty);
    // A file whose e001 was checked later, and whose e002 was checked earlier, than the store's.
    const edited = lines().map((l) => {
      if (!l.startsWith("{")) return l;
      const line = JSON.parse(l);
      if (line.entity?.domain === "e001.example") Object.assign(line.entity, { last_checked_at: at(9), name: "Newer" });
      if (line.entity?.domain === "e002.example") Object.assign(line.entity, { last_checked_at: at(-1), name: "Older" });
      return JSON.stringify(line);
    });
    const changesBefore = await count(store, "changes");
    const merged = await load(store, edited.join("\n"), true);
    expect(merged).toMatchObject({ entities: 1, kept: 66, changes: 0 });
    expect(await count(store, "changes")).toBe(changesBefore);
    const names = await store.db.query<{ domain: string; name: string }>(
      "SELECT domain, name FROM entities WHERE domain IN ('e001.example', 'e002.example') ORDER BY domain",
    );
    expect(names.map((n) => n.name)).toEqual(["Newer", "محمد"]);
  });
});

describe("the command line", () => {
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [BIN, ...args],
        { env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", IDENT_CRAWL: "0", ...env }, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
      );
    });

  /** An embedded store in a folder of its own, filled, closed, and what its export holds. */
  const filledEmbedded = async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, "data");
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
      /^ident: exported 67 entities \(\d+ claims, \d+ changes\) and \d+ jobs in [\d.]+ s to .*index\.ndjson\n$/,
    );
    expect(readFileSync(file, "utf8")).toBe(expected);
    const toStdout = await run(["store", "export"], { IDENT_DATA_DIR: dataDir });
    expect(toStdout.stdout).toBe(expected);
    const server = await postgres().location();
    if (server.kind !== "server") throw new Error("expected a server");
    const into = await run(["store", "import", file], { IDENT_DATABASE_URL: server.url });
    expect(into.code, into.stderr).toBe(0);
    expect(into.stderr).toMatch(
      /^ident: imported 67 entities \(\d+ claims, \d+ changes\) and \d+ jobs in [\d.]+ s \([\d,]+ entities\/s\)\n$/,
    );
    const again = await run(["store", "import", file], { IDENT_DATABASE_URL: server.url });
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      "ident: the store already holds 67 entities; import into an empty store, or give --merge to add the file's to them; nothing was imported\n",
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
});
