/** `ident resolve <query> [--json]` as a user runs it (docs/decisions.md#interfaces), against the sample network. */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SearchResponse } from "ident-resolver";
import { openStore } from "ident-resolver/store";
import { newEmbeddedDir } from "../helpers/engines";
import { useSampleNetwork } from "../helpers/sample";

const ctx = useSampleNetwork();
const BIN = path.resolve(import.meta.dirname, "../../bin/ident.js");

function ident(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", ...ctx.net.env, IDENT_FETCH_TIMEOUT_MS: "2000", ...env }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("ident CLI", () => {
  it("--json prints exactly the SearchResponse and exits 0 for an accepted entity", async () => {
    const { code, stdout, stderr } = await ident(["resolve", "alice.example", "--json"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const parsed = SearchResponse.parse(JSON.parse(stdout));
    expect(parsed.query).toEqual({ input: "alice.example", kind: "domain", domain: "alice.example" });
    expect(parsed.results[0]?.entity.status).toBe("accepted");
  });
  it("the readable verdict lists each claim with ✓ or ✗, the reason in words, and where it came from", async () => {
    const { code, stdout } = await ident(["resolve", "§:entity:mallory.example"]);
    expect(code).toBe(0);
    expect(stdout).toContain("Mallory Finch [mallory.example] (person): accepted");
    expect(stdout).toContain("✗ @bob@guild.example/members: the credential names another entity [entity_mismatch]");
    expect(stdout).toContain("guild.example's credential document names §:entity:bob.example, not this entity");
    expect(stdout).toContain("from https://guild.example/members/bob/ident-credential.json (JSON, HTTP 200");
    const dana = await ident(["resolve", "https://dana.test/about"]);
    expect(dana.stdout).toContain("from https://dana.test/ (embedded in the page");
    expect(dana.stdout).toMatch(/✓ §:property:dana-studio\.test/);
  });
  it("exits 1 when no entity is accepted", async () => {
    const rejected = await ident(["resolve", "borrowed-id.test"]);
    expect(rejected.code).toBe(1);
    expect(rejected.stdout).toContain("claims to be alice.example");
    expect((await ident(["resolve", "nobody.test", "--json"])).code).toBe(1);
  });
  it("a property query lists every owner", async () => {
    const { code, stdout } = await ident(["resolve", "§:property:jointventure.example", "--json"]);
    expect(code).toBe(0);
    expect(SearchResponse.parse(JSON.parse(stdout)).results.map((r) => r.focus?.reason ?? "verified")).toEqual([
      "verified",
      "verified",
      "not_claimed",
    ]);
  });
  it.each([
    [["resolve", "http://alice.example"], /invalid query: Only https:\/\/ URLs/],
    [["resolve", "not a query"], /expected a domain/],
    [["resolve"], /expected: resolve <query>/],
    [["lookup", "alice.example"], /usage: ident resolve/],
    [["resolve", "alice.example", "--yaml"], /unknown option --yaml/],
    [[], /usage: ident resolve/],
  ])("exits 2 for bad usage %j, saying what is accepted", async (args, message) => {
    const { code, stdout, stderr } = await ident(args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message);
  });
  it("fails at start with a clear message on bad configuration", async () => {
    const { code, stderr } = await ident(["resolve", "alice.example"], { IDENT_FETCH_TIMEOUT_MS: "soon", IDENT_CONNECT_TO: "x" });
    expect(code).toBe(2);
    expect(stderr).toContain("IDENT_FETCH_TIMEOUT_MS");
    expect(stderr).toContain("IDENT_CONNECT_TO");
  });
});

describe("ident CLI with an index (docs/decisions.md#the-index)", () => {
  it("records into the store named by IDENT_DATA_DIR: a second run sees the first one's times", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ident-cli-"));
    try {
      const env = { IDENT_DATA_DIR: newEmbeddedDir(dir) };
      const first = SearchResponse.parse(JSON.parse((await ident(["resolve", "alice.example", "--json"], env)).stdout));
      const seen = first.results[0]!.properties[0]!.since?.first_seen_at;
      expect(seen).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(first.results[0]!.entity.last_checked_at).toBe(seen);
      const second = SearchResponse.parse(JSON.parse((await ident(["resolve", "alice.example", "--json"], env)).stdout));
      expect(second.results[0]!.properties[0]!.since?.first_seen_at).toBe(seen);
      expect(second.results[0]!.entity.last_checked_at! > seen!).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("a store in use by another process is said in one line, and the lookup is answered unrecorded", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ident-cli-"));
    const held = await openStore({ kind: "embedded", dataDir: newEmbeddedDir(dir) });
    try {
      const { code, stdout, stderr } = await ident(["resolve", "alice.example", "--json"], { IDENT_DATA_DIR: path.join(dir, "data") });
      expect(code).toBe(0);
      expect(stderr).toMatch(/^ident: not recorded: the store in .* is in use by another process \(pid \d+\)[^\n]*\n$/);
      expect(SearchResponse.parse(JSON.parse(stdout)).results[0]!.properties[0]!.since).toBeUndefined();
    } finally {
      await held.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("without a store named, nothing is recorded and no folder is made", async () => {
    const parsed = SearchResponse.parse(JSON.parse((await ident(["resolve", "alice.example", "--json"])).stdout));
    expect(parsed.results[0]!.entity.last_checked_at).toBeUndefined();
  });
  it("ident search finds what the index recorded: exit 0 with hits, 1 with none, 2 for bad text or no index", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ident-cli-"));
    try {
      const env = { IDENT_DATA_DIR: newEmbeddedDir(dir) };
      expect((await ident(["resolve", "alice.example"], env)).code).toBe(0);
      const found = await ident(["search", "alise moreau"], env);
      expect(found.code).toBe(0);
      expect(found.stdout).toMatch(/^Alice Moreau \[alice\.example\] \(person\): \d+ verified, \d+ not verified; last checked /);
      const json = await ident(["search", "workshop", "--json"], env);
      expect(JSON.parse(json.stdout)).toMatchObject({
        schema: "ident-resolver/index-search@1",
        query: "workshop",
        results: [{ domain: "alice.example", url: "/entity/alice.example", status: "accepted" }],
        next_cursor: null,
      });
      const none = await ident(["search", "nobody at all"], env);
      expect(none.code).toBe(1);
      expect(none.stdout).toContain("Nothing in the index matches");
      expect(await ident(["search", "a\u0007b"], env)).toMatchObject({ code: 2, stderr: expect.stringContaining("control characters") });
      expect(await ident(["search", "alice", "--cursor", "nope"], env)).toMatchObject({
        code: 2,
        stderr: expect.stringContaining("cursor"),
      });
      expect(await ident(["search", "alice"], { IDENT_DATA_DIR: ":memory:" })).toMatchObject({
        code: 2,
        stderr: expect.stringContaining(":memory:"),
      });
      expect(await ident(["search", "alice"], { IDENT_DATA_DIR: path.join(dir, "none") })).toMatchObject({
        code: 2,
        stderr: expect.stringContaining("no index to search"),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
