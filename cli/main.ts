import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { configErrorMessage, parseConfig } from "ident-resolver/setup";
import { openStore, type Store } from "ident-resolver/store";
import { parseSearchText, type IndexSearch } from "ident-resolver/store";
import { reasonText, statusText } from "ident-resolver/present";
import { parseQuery, QUERY_FORMS } from "ident-resolver";
import type { Claim, EntityResult, SearchResponse, Source } from "ident-resolver";
import { VERSION } from "ident-resolver";
import type { Io } from "./io";
import { printable } from "./print";

const USAGE = `usage: ident resolve <query> [--json]
       ident search <text> [--json] [--cursor <cursor>]
       ident check <domain | file> [--json]
       ident store export [FILE]
       ident store import FILE [--merge]

  resolve   looks up <query>: ${QUERY_FORMS}
  search    searches the index (names, domains, descriptions, claims) for <text>; fetches nothing
  check     checks a domain live (cache bypassed) or a document file offline, and says what to fix
  --json    print the record (docs/decisions.md#the-result-record, docs/decisions.md#search) and nothing else
  --cursor  the next page of a search, as the previous page gave it
  store     the configured store's whole index as NDJSON (to FILE, or standard output), and back into
            the configured store (docs/deploying.md#moving-the-index); --merge adds to a store that
            already holds entities

Exit status: resolve: 0 when an entity is accepted, 1 when none is; search: 0 with hits, 1 with none;
check: 0 with no errors (warnings allowed), 1 with errors; store: 0 when done, 1 when refused (a bad
file, a store in use or not empty), 130 when an import is stopped by Ctrl-C (128 + the signal's
number: it is rolled back); 2 for a bad query or usage, or an index that cannot be searched.`;

export { printable };

const VIA: Record<Source["via"], string> = { json: "JSON", embed: "embedded in the page", page: "page" };

function sourceLine(source: Source | undefined): string {
  if (!source) return "";
  const how = VIA[source.via];
  return `${printable(source.url)} (${how}, HTTP ${source.http_status}, ${source.bytes} bytes, ${source.ms} ms)`;
}

function claimLines(title: string, claims: Claim[]): string[] {
  if (claims.length === 0) return [];
  const lines = [`${title}:`];
  for (const claim of claims) {
    const id = printable(claim.id ?? "(no id)");
    if (claim.verified) {
      lines.push(`  ✓ ${id}`);
    } else {
      const reason = claim.reason ?? "not_found";
      lines.push(`  ✗ ${id}: ${reasonText(reason)} [${reason}]`);
      const detail = claim.problems.find((p) => p.code === reason);
      if (detail) lines.push(`      ${printable(detail.message)}`);
    }
    if (claim.source) lines.push(`      from ${sourceLine(claim.source)}`);
    for (const p of claim.problems.filter((p) => p.severity === "warning")) lines.push(`      ! ${printable(p.message)}`);
  }
  return lines;
}

function entityLines(result: EntityResult): string[] {
  const e = result.entity;
  const name = e.details?.name ? `${printable(e.details.name)} ` : "";
  const kind = e.entity_type ? ` (${printable(e.entity_type)})` : "";
  const lines = [`${name}[${e.domain}]${kind}: ${statusText(e.status)}`];
  if (e.network_id) lines.push(`  network_id: ${printable(e.network_id)}`);
  if (e.source) lines.push(`  from ${sourceLine(e.source)}`);
  lines.push(`  fetched ${result.cache.fetched_at}${result.cache.stale ? " (stale copy, refreshing)" : ""}`);
  for (const [key, value] of Object.entries(e.details ?? {})) {
    if (key !== "name") lines.push(`  ${key}: ${printable(value)}`);
  }
  for (const p of e.problems) lines.push(`  ${p.severity === "error" ? "✗" : "!"} ${printable(p.message)}`);
  if (result.focus) lines.push(...claimLines("This query's claim", [result.focus]));
  lines.push(...claimLines("Properties", result.properties));
  lines.push(...claimLines("Credentials", result.credentials));
  lines.push(...claimLines("Connections", result.connections));
  return lines;
}

/** The readable verdict: the entity, then each claim with ✓ or ✗ and the reason in words. */
export function formatResponse(response: SearchResponse): string {
  const lines: string[] = [];
  for (const p of response.problems) lines.push(`${p.severity === "error" ? "✗" : "!"} ${printable(p.message)}`);
  if (response.results.length === 0) lines.push("No entity found.");
  for (const result of response.results) lines.push("", ...entityLines(result));
  return `${lines.join("\n").trim()}\n`;
}

/** The command line, read by node:util's parseArgs: `resolve <query>` and its flags, or why not. */
function readArgs(
  argv: readonly string[],
):
  | { ok: true; json: boolean; help: boolean; version: boolean; merge: boolean; cursor: string | null; positionals: string[] }
  | { ok: false; message: string } {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: {
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean" },
        cursor: { type: "string" },
        merge: { type: "boolean" },
      },
      allowPositionals: true,
      strict: true,
    });
    return {
      ok: true,
      json: values.json === true,
      help: values.help === true,
      version: values.version === true,
      merge: values.merge === true,
      cursor: values.cursor ?? null,
      positionals,
    };
  } catch (err) {
    const option = err instanceof Error ? /'(-[^']*)'/.exec(err.message)?.[1] : undefined;
    return { ok: false, message: option ? `unknown option ${option}` : err instanceof Error ? err.message : "bad arguments" };
  }
}

/** `ident resolve <query> [--json]` (docs/decisions.md#interfaces). Returns the exit status. */
export async function run(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: Io): Promise<number> {
  const args = readArgs(argv);
  if (args.ok && args.version) {
    io.out(`${VERSION}\n`);
    return 0;
  }
  if (argv.length === 0 || (args.ok && args.help)) {
    io[argv.length === 0 ? "err" : "out"](`${USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const [command, query, ...extra] = args.ok ? args.positionals : [];
  if (args.ok && command === "store" && !args.json && args.cursor === null) {
    const [file, ...more] = extra;
    // Each command loads only its own code: moving the index needs neither the resolver nor its fetcher.
    if (query === "export" && more.length === 0 && !args.merge) return (await import("./store")).storeExport(file ?? null, env, io);
    if (query === "import" && file !== undefined && more.length === 0)
      return (await import("./store")).storeImport(file, args.merge, env, io);
    io.err(`ident: expected: store export [FILE] or store import FILE [--merge]\n${USAGE}\n`);
    return 2;
  }
  if (args.ok && command === "search" && query !== undefined && extra.length === 0) return search(query, args, env, io);
  if (args.ok && command === "check" && query !== undefined && extra.length === 0 && args.cursor === null) {
    return (await import("./check")).check(query, args.json, env, io);
  }
  if (!args.ok || command !== "resolve" || query === undefined || extra.length > 0 || args.cursor !== null) {
    const expected =
      command === "search"
        ? "expected: search <text>"
        : command === "check"
          ? "expected: check <domain | file>"
          : "expected: resolve <query>";
    io.err(
      `ident: ${args.ok ? (args.cursor !== null && command === "resolve" ? "--cursor is for search" : expected) : args.message}\n${USAGE}\n`,
    );
    return 2;
  }
  return resolve(query, args.json, env, io);
}

/** `ident resolve <query>`: the lookup, recorded into a store named in the environment; its exit status. */
async function resolve(query: string, json: boolean, env: Readonly<Record<string, string | undefined>>, io: Io): Promise<number> {
  const config = parseConfig(env);
  if (!config.ok) {
    io.err(`${configErrorMessage(config.errors)}\n`);
    return 2;
  }
  const parsedQuery = parseQuery(query);
  if (!parsedQuery.ok) {
    io.err(`ident: invalid query: ${parsedQuery.message}\n`);
    return 2;
  }
  // docs/decisions.md#the-index: the CLI records only into a store named in its environment; one that
  // is in use (the app's) or cannot be opened is said in one line, and the lookup goes on unrecorded.
  const where = config.config.store;
  const inMemory = where.kind === "embedded" && where.dataDir === null;
  const named = [env.IDENT_DATABASE_URL, env.IDENT_DATA_DIR].some((v) => v?.trim()) && !inMemory;
  const store = named
    ? openStore(where).catch((err: unknown) => {
        io.err(`ident: not recorded: ${err instanceof Error ? err.message : String(err)}\n`);
        return null;
      })
    : Promise.resolve(null);
  const { createConfiguredResolver } = await import("ident-resolver/setup");
  const { answerRefusal } = await import("ident-resolver/traffic");
  const resolver = createConfiguredResolver(config.config, { store });
  try {
    const outcome = await resolver.search(query, { client: "cli" });
    // docs/architecture.md#traffic: work this machine declined or could not do is not a verdict.
    if (!outcome.ok && "refused" in outcome) {
      io.err(`ident: not resolved: ${answerRefusal(outcome.refused).message}\n`);
      return 1;
    }
    if (!outcome.ok) {
      io.err(`ident: invalid query: ${outcome.error.message}\n`);
      return 2;
    }
    io.out(json ? `${JSON.stringify(outcome.response, null, 2)}\n` : formatResponse(outcome.response));
    return outcome.response.results.some((r) => r.entity.status === "accepted") ? 0 : 1;
  } finally {
    await resolver.close();
  }
}

/** One index hit as a line and its page (docs/decisions.md#search). */
export function formatHits(page: IndexSearch): string {
  if (page.results.length === 0) return `Nothing in the index matches "${printable(page.query)}". Look up a domain to add it.\n`;
  const lines: string[] = [];
  for (const hit of page.results) {
    const name = hit.name ? `${printable(hit.name)} ` : "";
    const kind = hit.entity_type ? ` (${printable(hit.entity_type)})` : "";
    const verdict =
      hit.status === "accepted"
        ? `${hit.verified} verified, ${hit.unverified} not verified`
        : // The index's status, which an import fills with any text: one with no words is printed as itself (docs/decisions.md#rendering).
          (statusText(hit.status) ?? printable(hit.status));
    lines.push(`${name}[${hit.domain}]${kind}: ${verdict}; last checked ${hit.last_checked_at}`);
    if (hit.description) lines.push(`  ${printable(hit.description.slice(0, 160))}`);
  }
  if (page.next_cursor) lines.push("", `More: ident search ${JSON.stringify(page.query)} --cursor ${page.next_cursor}`);
  return `${lines.join("\n")}\n`;
}

/** `ident search <text> [--json] [--cursor c]`: the index named by the environment, or .data/ by default. */
async function search(
  text: string,
  args: { json: boolean; cursor: string | null },
  env: Readonly<Record<string, string | undefined>>,
  io: Io,
): Promise<number> {
  const config = parseConfig(env);
  if (!config.ok) {
    io.err(`${configErrorMessage(config.errors)}\n`);
    return 2;
  }
  const parsed = parseSearchText(text);
  if (!parsed.ok) {
    io.err(`ident: invalid search: ${parsed.message}\n`);
    return 2;
  }
  const where = config.config.store;
  if (where.kind === "embedded" && where.dataDir === null) {
    io.err("ident: no index to search: IDENT_DATA_DIR is :memory:; name a folder or set IDENT_DATABASE_URL\n");
    return 2;
  }
  if (where.kind === "embedded" && where.dataDir && !existsSync(where.dataDir)) {
    io.err(`ident: no index to search in ${where.dataDir}; run the app or 'ident resolve' with IDENT_DATA_DIR set first\n`);
    return 2;
  }
  let store: Store;
  try {
    store = await openStore(where);
  } catch (err) {
    // The app holds the embedded store while it runs: its /api/search answers the same question.
    io.err(`ident: the index cannot be searched: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  try {
    const page = await store.search(parsed.text, args.cursor);
    if (page === null) {
      io.err("ident: invalid search: the cursor is not one this index handed out\n");
      return 2;
    }
    io.out(args.json ? `${JSON.stringify(page, null, 2)}\n` : formatHits(page));
    return page.results.length > 0 ? 0 : 1;
  } finally {
    await store.close();
  }
}
