/**
 * Moving the index (docs/deploying.md#moving-the-index): export and import on the embedded store and
 * a real PostgreSQL server, a round trip embedded → PostgreSQL → embedded that keeps every entity,
 * claim, time, change and queued job (the three files are byte for byte the same), bad files refused
 * with their line and nothing written, and a store that holds entities refused unless merging. The
 * command line is in export-cli.test.ts, failed imports in import-failed.test.ts.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linesOf } from "../../cli/store";
import { openStore, type Store, type StoreLocation } from "ident-resolver/store";
import { bytesAfter, ImportError, StoreNotEmpty, type ExportEntity, type NumberedLine } from "ident-resolver/store";
import { parseQuery } from "ident-resolver";
import { useEngines } from "../helpers/engines";
import {
  at,
  result,
  HOSTILE,
  fill,
  exported,
  load,
  sha,
  count,
  withValue,
  fromNow,
  MINUTE,
  entityLine,
  header,
} from "../helpers/export-fixtures";

const { engines: ENGINES, database } = useEngines("export");
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
      entities: 65,
      claims: await count(embedded, "claims"),
      changes: await count(embedded, "changes"),
      jobs: await count(embedded, "crawl_queue"),
    });
    expect(intoServer).toMatchObject({
      entities: 65,
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
    expect(lines.find((l) => l.entity?.domain === "zz-hostile.example")).toMatchObject({
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

describe.each(ENGINES)("domains no lookup takes, on $name", ({ location }) => {
  it("are exported in byte order (U+FF21 before U+1F642; a quote SQL must escape), and refused by an import at their line", async () => {
    const store = await openStore(await location());
    const other = await openStore(await location());
    try {
      // Written by hand: no lookup records such a domain.
      for (const d of ["\uff21-wide.example", "\u{1f642}-smile.example", "zz-o'neil\\x.example", "plain.example"])
        await store.record(result(d, at(2), "Odd", []));
      // A batch of one: each batch asks for what comes after a domain SQL must quote.
      const text = await exported(store, 1);
      const domains = text
        .trim()
        .split("\n")
        .slice(1)
        .flatMap((l) => (l.startsWith('{"entity"') ? [(JSON.parse(l) as ExportEntity).entity.domain] : []));
      expect(domains).toEqual(["plain.example", "zz-o'neil\\x.example", "\uff21-wide.example", "\u{1f642}-smile.example"]);
      await expect(load(other, text)).rejects.toThrow(
        `line 3: not a valid entity (entity.domain: "zz-o'neil\\\\x.example" is not a domain as a lookup takes it (lower case; no path, port, address or control character))`,
      );
    } finally {
      await Promise.all([store.close(), other.close()]);
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

  it("what was read is let go as it goes, with a signal to stop it too: 64 MB read through hold no more than a few reads of it", () => {
    // In a process of its own, to collect its garbage when asked (--expose-gc): the heap after the
    // first megabyte and after 60 more. Racing each read against one pending abort once kept every
    // read alive (2.5 GB for 1,000,000 entities).
    const file = path.join(dir, "big.ndjson");
    writeFileSync(file, `${"x".repeat(1023)}\n`.repeat(64 * 1024));
    const script = `
      import { linesOf } from ${JSON.stringify(path.resolve("cli/store.ts"))};
      const heap = () => (globalThis.gc(), process.memoryUsage().heapUsed);
      let first = 0, later = 0, n = 0;
      for await (const line of linesOf(${JSON.stringify(file)}, 1 << 20, new AbortController().signal)) {
        if (++n === 1024) first = heap();
        if (n === 61 * 1024) later = heap();
      }
      process.stdout.write(JSON.stringify({ n, grew: later - first }));`;
    const out = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    const { n, grew } = JSON.parse(out) as { n: number; grew: number };
    expect(n).toBe(64 * 1024);
    expect(grew).toBeLessThan(8 * 1024 * 1024);
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
    // A file taken by mistake is not left for the next test to meet.
    if (error === null) await store.db.query("TRUNCATE entities, claims, changes, crawl_queue, search_words");
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
      /the file holds 19 entities where its first line says 65: it is cut short/,
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
  // docs/deploying.md#what-an-import-refuses: what the live resolver could not have recorded.
  const lineOf = (domain: string) => lines().findIndex((l) => l.includes(`"domain":"${domain}"`));
  const firstJob = () => lines().findIndex((l) => l.startsWith('{"job"'));
  /** Each of `files` refused, in one line that starts with the line's number; the refusals. */
  const allRefused = async (files: string[]) => {
    const said: string[] = [];
    for (const text of files) said.push(await refused(text));
    for (const message of said) expect(message).toMatch(/^line \d+: [^\n]+$/);
    return said;
  };

  it("a time later than now and 5 minutes, of an entity, a claim, a change or a job; a job due more than a day ahead", async () => {
    const e = lineOf("e000.example");
    const j = firstJob();
    const said = await allRefused([
      withValue(file, e, ["entity", "last_checked_at"], "9999-12-31T00:00:00.000Z"),
      withValue(file, e, ["claims", 1, "verified_since"], fromNow(10 * MINUTE)),
      withValue(file, e, ["changes", 0, "at"], fromNow(60 * MINUTE)),
      withValue(file, j, ["job", "queued_at"], fromNow(6 * MINUTE)),
      withValue(file, j, ["job", "due_at"], fromNow(25 * 60 * MINUTE)),
    ]);
    expect(said[0]).toMatch(
      new RegExp(
        `^line ${e + 1}: not a valid entity \\(entity\\.last_checked_at: 9999-12-31T00:00:00\\.000Z is later than \\S+Z, this machine's time and 5 minutes`,
      ),
    );
    expect(said[1]).toMatch(new RegExp(`^line ${e + 1}: not a valid entity \\(claims\\.1\\.verified_since: \\S+ is later than `));
    expect(said[2]).toMatch(new RegExp(`^line ${e + 1}: not a valid entity \\(changes\\.0\\.at: `));
    expect(said[3]).toMatch(new RegExp(`^line ${j + 1}: not a valid job \\(job\\.queued_at: `));
    expect(said[4]).toMatch(new RegExp(`^line ${j + 1}: not a valid job \\(job\\.due_at: \\S+ is later than \\S+, a day from now`));
  });
  it("a time before 2020-01-01, the year 0000 among them", async () => {
    const e = lineOf("e001.example");
    const said = await allRefused([
      withValue(file, e, ["entity", "first_seen_at"], "0000-01-01T00:00:00.000Z"),
      withValue(file, e, ["claims", 0, "first_seen_at"], "2019-12-31T23:59:59.999Z"),
    ]);
    expect(said).toEqual([
      `line ${e + 1}: not a valid entity (entity.first_seen_at: 0000-01-01T00:00:00.000Z is before 2020-01-01, earlier than any index)`,
      `line ${e + 1}: not a valid entity (claims.0.first_seen_at: 2019-12-31T23:59:59.999Z is before 2020-01-01, earlier than any index)`,
    ]);
  });
  it("a value outside its closed set: an entity's status, a claim's reason, a change's status or reason, a job's reason or priority", async () => {
    const e = lineOf("e000.example");
    const j = firstJob();
    const said = await allRefused([
      withValue(file, e, ["entity", "status"], "constructor"),
      withValue(file, e, ["claims", 0, "reason"], "constructor"),
      withValue(file, e, ["claims", 0, "stale_reason"], "toString"),
      withValue(file, e, ["changes", 0, "status"], "__proto__"),
      withValue(file, e, ["changes", 1, "reason"], "hasOwnProperty"),
      withValue(file, j, ["job", "reason"], "constructor"),
      withValue(file, j, ["job", "priority"], 7),
    ]);
    expect(said.map((m) => m.replace(/ \(([\w.]+): .*/, " ($1)"))).toEqual([
      `line ${e + 1}: not a valid entity (entity.status)`,
      `line ${e + 1}: not a valid entity (claims.0.reason)`,
      `line ${e + 1}: not a valid entity (claims.0.stale_reason)`,
      `line ${e + 1}: not a valid entity (changes.0.status)`,
      `line ${e + 1}: not a valid entity (changes.1.reason)`,
      `line ${j + 1}: not a valid job (job.reason)`,
      `line ${j + 1}: not a valid job (job.priority)`,
    ]);
  });
  it("a domain no lookup takes: capitals, a path, a port, a control character, an IP address, localhost; an entity's, an issuer's or a job's", async () => {
    const first = lineOf("a-b.example");
    const j = firstJob();
    const bad = ["A-b.example", "a-b.example/x", "a-b.example:443", "a-b\u0007.example", "127.0.0.1", "localhost", "[::1]", " a-b.example"];
    const said = await allRefused([
      ...bad.map((d) => withValue(file, first, ["entity", "domain"], d)),
      withValue(file, lineOf("e000.example"), ["claims", 0, "issuer"], "Guild.example"),
      withValue(file, j, ["job", "domain"], "127.0.0.1"),
      withValue(file, j, ["job", "domain"], "localhost"),
    ]);
    bad.forEach((d, i) =>
      expect(said[i]).toBe(
        `line ${first + 1}: not a valid entity (entity.domain: ${JSON.stringify(d)} is not a domain as a lookup takes it (lower case; no path, port, address or control character))`,
      ),
    );
    expect(said[bad.length]).toMatch(/^line \d+: not a valid entity \(claims\.0\.issuer: "Guild\.example" is not a domain/);
    expect(said.slice(-2)).toEqual(
      ["127.0.0.1", "localhost"].map(
        (d) =>
          `line ${j + 1}: not a valid job (job.domain: "${d}" is not a domain as a lookup takes it (lower case; no path, port, address or control character))`,
      ),
    );
  });
  it("a domain exactly as a lookup takes it, and no other", async () => {
    // Each alone in a file, merged into a store of its own: taken exactly when the query parser reads it as that domain.
    const own = await openStore(await location());
    try {
      const candidates = [
        "ok.example",
        "xn--bcher-kva.example",
        "a-b.c-d.example",
        "Ok.example",
        "ok.example.",
        "ok..example",
        "-ok.example",
      ];
      candidates.push("ok.example ", "ok", "1.2.3.4", "ok.e", "ok.example/", "ok_1.example", `${"a".repeat(64)}.example`);
      for (const domain of candidates) {
        const parsed = parseQuery(domain);
        const lookup = parsed.ok && parsed.query.kind === "domain" && parsed.query.domain === domain;
        const taken = await load(own, `${header({ entities: 1 })}\n${entityLine(domain)}\n`, true).then(
          () => true,
          (e: unknown) => (e instanceof ImportError ? false : Promise.reject(e)),
        );
        expect(taken, domain).toBe(lookup);
      }
    } finally {
      await own.close();
    }
  });
  it("a text longer than the index keeps: a name (300 characters), a description (5,000), what a claim is called (500)", async () => {
    const e = lineOf("e000.example");
    const said = await allRefused([
      withValue(file, e, ["entity", "name"], "n".repeat(301)),
      withValue(file, e, ["entity", "details", "name"], "😀".repeat(301)),
      withValue(file, e, ["entity", "description"], "d".repeat(5001)),
      withValue(file, e, ["entity", "details", "description"], "word ".repeat(2_000_000)),
      withValue(file, e, ["claims", 0, "label"], "l".repeat(501)),
      withValue(file, e, ["claims", 0, "issuer_name"], "i".repeat(501)),
    ]);
    expect(said).toEqual(
      [
        "entity.name: longer than the 300 characters the index keeps of a name",
        "entity.details.name: longer than the 300 characters the index keeps of a name",
        "entity.description: longer than the 5,000 characters the index keeps of a description",
        "entity.details.description: longer than the 5,000 characters the index keeps of a description",
        "claims.0.label: longer than the 500 characters the index keeps of what a claim is called",
        "claims.0.issuer_name: longer than the 500 characters the index keeps of what a claim is called",
      ].map((m) => `line ${e + 1}: not a valid entity (${m})`),
    );
  });
  it("a number past the engine's integer, a NUL in a text or a key, details nested 10,000 deep: one line with the line's number", async () => {
    const e = lineOf("e000.example");
    const j = firstJob();
    const raw = (index: number, edit: (line: string) => string) =>
      lines()
        .map((l, i) => (i === index ? edit(l) : l))
        .join("\n");
    const said = await allRefused([
      withValue(file, e, ["entity", "verified"], 2 ** 31),
      withValue(file, j, ["job", "attempts"], 2 ** 31),
      raw(e, (l) => l.replace('"name":"', '"name":"a\\u0000')),
      raw(e, (l) => l.replace('"details":{', '"details":{"a\\u0000b":"x",')),
      raw(e, (l) => l.replace('"details":{', `"details":{"deep":${"[".repeat(10_000)}${"]".repeat(10_000)},`)),
      raw(e, (l) => l.replace('"problems":[', `"problems":[${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`)),
    ]);
    expect(said).toEqual([
      `line ${e + 1}: not a valid entity (entity.verified: larger than the index's numbers hold (2,147,483,647))`,
      `line ${j + 1}: not a valid job (job.attempts: larger than the index's numbers hold (2,147,483,647))`,
      `line ${e + 1}: entity.name: a NUL character (\\u0000), which no text of the index holds`,
      `line ${e + 1}: entity.details."a\\u0000b": a NUL character (\\u0000), which no text of the index holds`,
      `line ${e + 1}: not a valid entity (entity.details.deep: Invalid input: expected string, received array)`,
      `line ${e + 1}: not a valid entity (entity.problems.0.code: Invalid input: expected string, received undefined)`,
    ]);
  });
  it("one entity, claim, change or job more than the first line says: refused at that line, not at the end", async () => {
    const counts = JSON.parse(lines()[0]!).counts as Record<string, number>;
    const e = lineOf("e000.example");
    const j = firstJob();
    const last = lines().filter(Boolean).length - 1;
    const said = await allRefused([
      withValue(file, 0, ["counts", "entities"], 1),
      withValue(file, 0, ["counts", "claims"], 1),
      withValue(file, 0, ["counts", "changes"], 0),
      withValue(file, 0, ["counts", "jobs"], counts.jobs! - 1),
      withValue(file, 0, ["counts", "entities"], counts.entities! + 1),
    ]);
    expect(said).toEqual([
      "line 3: more entities than the 1 its first line says: the file was edited, or is more than one export",
      `line ${e + 1}: more claims than the 1 its first line says: the file was edited, or is more than one export`,
      `line ${lineOf("a-b.example") + 1}: more changes than the 0 its first line says: the file was edited, or is more than one export`,
      `line ${last + 1}: more jobs than the ${counts.jobs! - 1} its first line says: the file was edited, or is more than one export`,
      // The jobs begin: every entity should have come.
      `line ${j + 1}: the file holds ${counts.entities} entities where its first line says ${counts.entities! + 1}: it is cut short or was edited`,
    ]);
  });
  it("within the bounds: a time up to 5 minutes ahead, a job due a day ahead, 300 characters of two UTF-16 units each", async () => {
    const e = lineOf("e000.example");
    let edited = withValue(file, e, ["entity", "last_checked_at"], fromNow(4 * MINUTE));
    edited = withValue(edited, e, ["entity", "name"], "😀".repeat(300));
    edited = withValue(edited, e, ["entity", "details", "description"], "é".repeat(5000));
    edited = withValue(edited, firstJob(), ["job", "due_at"], fromNow(23 * 60 * MINUTE));
    const own = await openStore(await location());
    try {
      expect((await load(own, edited)).entities).toBe(JSON.parse(lines()[0]!).counts.entities);
      const [row] = await own.db.query<{ name: string }>("SELECT name FROM entities WHERE domain = 'e000.example'");
      expect(row?.name).toBe("😀".repeat(300));
    } finally {
      await own.close();
    }
  });
  it("an older release's file: a claim key and id of 9,000 characters no btree row takes, and a long entity type, import at the index's lengths (docs/decisions.md#the-index)", async () => {
    const e = lineOf("e000.example");
    const line = JSON.parse(lines()[e]!) as ExportEntity;
    // Incompressible, as a URL of random characters is: PostgreSQL would refuse it as an index row.
    const long = `https://x.example/${Array.from({ length: 9000 }, (_, i) => "abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7919 + (i >> 3) * 104729) % 36]).join("")}`;
    const claim = line.claims.find((c) => c.kind === "properties")!;
    const before = claim.claim_key;
    claim.claim_key = long;
    claim.id = long;
    for (const c of line.changes) if (c.kind === "properties" && c.claim_key === before) Object.assign(c, { claim_key: long, id: long });
    line.entity.entity_type = "t".repeat(100_000);
    const edited = lines()
      .map((l, i) => (i === e ? JSON.stringify(line) : l))
      .join("\n");
    const own = await openStore(await location());
    try {
      expect((await load(own, edited)).entities).toBe(JSON.parse(lines()[0]!).counts.entities);
      const claims = await own.db.query<{ claim_key: string; id: string }>(
        "SELECT claim_key, id FROM claims WHERE domain = 'e000.example' AND kind = 'properties'",
      );
      const bounded = claims.find((c) => c.claim_key.startsWith("#sha256:"));
      expect(bounded?.id.length).toBeLessThanOrEqual(1024);
      const changes = await own.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM changes WHERE domain = 'e000.example' AND claim_key = $1",
        [bounded?.claim_key],
      );
      expect(changes[0]?.n).toBeGreaterThan(0);
      const [entity] = await own.db.query<{ entity_type: string }>("SELECT entity_type FROM entities WHERE domain = 'e000.example'");
      expect(entity?.entity_type.length).toBe(300);
    } finally {
      await own.close();
    }
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
    expect(merged).toMatchObject({ entities: 1, kept: 64, changes: 0 });
    expect(await count(store, "changes")).toBe(changesBefore);
    const names = await store.db.query<{ domain: string; name: string }>(
      "SELECT domain, name FROM entities WHERE domain IN ('e001.example', 'e002.example') ORDER BY domain",
    );
    expect(names.map((n) => n.name)).toEqual(["Newer", "محمد"]);
  });
});
