/**
 * What the tests of moving the index share (test/integration/export.test.ts, export-cli.test.ts,
 * import-failed.test.ts): results to record, an index filled with turns of verdict and hostile text,
 * its export, lines of a file, and the command as an operator runs it.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Claim, EntityResult } from "ident-resolver";
import { type Store, type StoreLocation } from "ident-resolver/store";
import { EXPORT_SCHEMA, exportIndex, importIndex, type ExportEntity, type ExportJob, type NumberedLine } from "ident-resolver/store";

export const HOUR = 3600_000;
export const T0 = Date.parse("2026-04-01T10:00:00.000Z");
export const at = (hours: number) => new Date(T0 + hours * HOUR).toISOString();
export const BIN = path.resolve(import.meta.dirname, "../../bin/ident.js");

export type Spec = { id: string; verified: boolean; title?: string };
export function result(
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
export const HOSTILE = 'Tab\there "quoted" back\\slash \\N new\nline cr\r end';

/** An index with turns of verdict, a rejected entity, names from several scripts and hostile ones, and queued jobs. */
export async function fill(store: Store): Promise<void> {
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
  // A name that is COPY's null, and a name of everything COPY escapes (the last entity: the export asks for what comes after it).
  await store.record(
    result("null-name.example", at(2), "\\N", [{ id: "§:property:blog.null-name.example", verified: false, title: "\\N" }]),
  );
  await store.record(result("zz-hostile.example", at(2), HOSTILE, [{ id: "@o@guild.example/members", verified: true, title: HOSTILE }]));
  await store.record(result("ab.example", at(2), "No hyphen", []));
  await store.db.query(
    `INSERT INTO crawl_queue (domain, reason, priority, due_at, backoff_s, attempts, queued_at, locked_until)
     VALUES ('queued-one.example', 'discovered', 1, $1, 0, 0, $1, NULL), ('queued-two.example', 'recheck', 2, $2, 3600, 2, $1, $2)
     ON CONFLICT (domain) DO NOTHING`,
    [at(3), at(4)],
  );
}

export async function exported(store: Store, batch?: number): Promise<string> {
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

export const load = (store: Store, text: string, merge = false, batch?: number) =>
  importIndex(store.db, linesOfText(text), { merge, batch });

export const sha = (text: string) => createHash("sha256").update(text).digest("hex");
export const count = async (store: Store, table: string) =>
  (await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]?.n;

/** `text` with the value at `path` in its line `index` (0 the header) set to `value`. */
export function withValue(text: string, index: number, path: (string | number)[], value: unknown): string {
  const lines = text.split("\n");
  const line: unknown = JSON.parse(lines[index]!);
  let at = line as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  at[path.at(-1)!] = value;
  lines[index] = JSON.stringify(line);
  return lines.join("\n");
}

/** A time `ms` from now. */
export const fromNow = (ms: number) => new Date(Date.now() + ms).toISOString();
export const MINUTE = 60_000;

/** A valid entity line for `domain`, with no claim, change or job. */
export const entityLine = (domain: string): string =>
  JSON.stringify({
    entity: {
      domain,
      status: "accepted",
      network_id: `§:entity:${domain}`,
      entity_type: "person",
      details: { name: `The site of ${domain}` },
      problems: [],
      verified: 0,
      unverified: 0,
      first_seen_at: at(0),
      last_checked_at: at(1),
      name: `The site of ${domain}`,
      description: null,
      ever_accepted: true,
      failed_checks: 0,
    },
    claims: [],
    changes: [],
  } satisfies ExportEntity);
export const header = (counts: { entities: number; claims?: number; changes?: number; jobs?: number }) =>
  JSON.stringify({ schema: EXPORT_SCHEMA, counts: { claims: 0, changes: 0, jobs: 0, ...counts } });

/** A claim of `domain` that verifies, as an export writes it: seen first at `first`, checked and verified at `last`. */
export function verifiedClaim(
  domain: string,
  kind: "properties" | "credentials",
  id: string,
  first: string,
  last: string,
): ExportEntity["claims"][number] {
  return {
    kind,
    claim_key: id.toLowerCase(),
    id,
    label: `What ${domain} calls it`,
    issuer: kind === "credentials" ? "guild.example" : null,
    issuer_name: kind === "credentials" ? "The Guild" : null,
    present: true,
    verified: true,
    reason: null,
    stale_reason: null,
    stale_message: null,
    first_seen_at: first,
    last_checked_at: last,
    last_verified_at: last,
    verified_since: first,
    failing_since: null,
  };
}

/**
 * An export of `n` entities named `bulk-000001.example`…, each with two claims, a change, a long
 * description and a queued job, followed by a line that is not JSON: an import writes all of it, then fails.
 */
export function failingBulk(n: number): string {
  const out = [header({ entities: n, claims: 2 * n, changes: n, jobs: n })];
  const domains = Array.from({ length: n }, (_, i) => `bulk-${String(i).padStart(6, "0")}.example`);
  for (const domain of domains) {
    const claim = (kind: "properties" | "credentials", id: string) => verifiedClaim(domain, kind, id, at(0), at(1));
    const line = JSON.parse(entityLine(domain)) as ExportEntity;
    line.entity.description = `${domain} makes things of wood and stone, and writes about them. `.repeat(8);
    line.claims = [claim("credentials", `@m@guild.example/members/${domain}`), claim("properties", `§:property:blog.${domain}`)];
    line.changes = [{ kind: "entity", claim_key: "", id: null, at: at(0), verified: null, status: "accepted", reason: null }];
    out.push(JSON.stringify(line));
  }
  for (const domain of domains)
    out.push(
      JSON.stringify({
        job: { domain, reason: "recheck", priority: 2, due_at: at(25), backoff_s: 0, attempts: 0, queued_at: at(1) },
      } satisfies ExportJob),
    );
  return `${out.join("\n")}\n{nope\n`;
}

/** The bytes of every file under `dir` (the embedded store's folder). */
export function folderBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce(
    (sum, e) => sum + (e.isDirectory() ? folderBytes(path.join(dir, e.name)) : e.isFile() ? statSync(path.join(dir, e.name)).size : 0),
    0,
  );
}

/** `ident` as an operator runs it. */
export const run = (args: string[], env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", IDENT_CRAWL: "0", ...env }, timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
/** The variable that points the command at a store. */
export const envOf = (where: StoreLocation): Record<string, string> =>
  where.kind === "server" ? { IDENT_DATABASE_URL: where.url } : { IDENT_DATA_DIR: where.dataDir ?? ":memory:" };
