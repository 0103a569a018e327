/**
 * The publisher's check (docs/publishing.md#check) against the sample network: every broken case is
 * reported on the document that must change, and every snippet, once published, makes its claim
 * verify (applied to the running network, then resolved again). Local files: each shape, the broken
 * ones, and the files that cannot be checked at all.
 */
import { answered } from "../helpers/answered";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, existsSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkFile, checkText } from "ident-resolver/check";
import { checkDomain } from "ident-resolver/check";
import { CHECK_SCHEMA, type CheckReport, type Finding } from "ident-resolver/check";
import type { Claim, EntityResult } from "ident-resolver";
import { useSampleNetwork } from "../helpers/sample";

const ctx = useSampleNetwork();
const BIN = path.resolve(import.meta.dirname, "../../bin/ident.js");
const ROOT = path.resolve(import.meta.dirname, "../../sample-network");
const SETTINGS = { fetchTimeoutMs: 2000 };
const dir = mkdtempSync(path.join(tmpdir(), "ident-check-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function ident(args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", ...ctx.net.env, IDENT_FETCH_TIMEOUT_MS: "2000" }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const resolver = () => ctx.resolver({ fetcher: { timeoutMs: 2000 } });
const claimsOf = (r: EntityResult): Claim[] => [...r.properties, ...r.credentials, ...r.connections];
const findings = (report: CheckReport): (Finding & { url: string; domain: string })[] =>
  report.documents.flatMap((d) => d.findings.map((f) => ({ ...f, url: d.url, domain: d.domain })));

/** Publishes a snippet on the running sample network, as the counterpart's owner would. */
function apply(f: Finding & { url: string; domain: string }): void {
  const url = new URL(f.url);
  const snippet = f.snippet!;
  const text =
    snippet.language === "html"
      ? `<!doctype html><html><body><p>Me elsewhere: ${snippet.text}</p></body></html>`
      : JSON.stringify(snippet.document);
  // The sample network names its files by the decoded path.
  ctx.net.change(url.hostname, { files: { [decodeURIComponent(url.pathname)]: text } });
}

/** Entities of the sample network: every folder with an entity document. */
const ENTITIES = readdirSync(ROOT).filter((d) => existsSync(path.join(ROOT, d, "ident.json")));

describe("ident check <domain>", () => {
  it("mallory.example: each broken claim on the document to change, with its fix; each fix, published, makes the claim verify", async () => {
    const report = answered(await checkDomain(resolver(), "mallory.example", SETTINGS));
    expect(report.schema).toBe(CHECK_SCHEMA);
    expect(report.ok).toBe(false);
    const result = report.result!;
    // Every unverified claim has its finding, with the lookup's own reason.
    for (const claim of claimsOf(result).filter((c) => !c.verified)) {
      expect(findings(report).some((f) => f.code === claim.reason && f.severity === "error")).toBe(true);
    }
    const byUrl = (url: string) => report.documents.find((d) => d.url === url)!;
    // The entity's own mistakes are on its own document; a counterpart's on that counterpart's.
    expect(byUrl("https://mallory.example/ident.json").findings.map((f) => f.code)).toEqual(
      expect.arrayContaining(["invalid_entry", "duplicate", "unsafe_url"]),
    );
    const listed = byUrl("https://blog.alice.example/ident-property.json").findings[0]!;
    expect(listed).toMatchObject({ code: "not_listed", anchor: "claim-not_listed" });
    expect(JSON.parse(listed.snippet!.text)).toEqual({ network_id: "§:entity:mallory.example" });
    expect(byUrl("https://guild.example/members/bob/ident-credential.json").findings[0]!.snippet!.text).toBe('"§:entity:mallory.example"');
    expect(byUrl("https://social.example/@mallory").findings[0]!.snippet!.text).toBe(
      '<a rel="me" href="https://mallory.example/">https://mallory.example/</a>',
    );
    // A connection failure says what happened; the library's words are only the detail.
    const gone = byUrl("https://no-such-host.test/ident-property.json").findings[0]!;
    expect(gone.message).toContain("the TLS handshake with no-such-host.test failed");
    expect(gone.detail).toMatch(/socket disconnected/i);
    expect(gone.snippet).toBeUndefined();

    const fixes = findings(report).filter((f) => f.snippet && (f.snippet.document !== undefined || f.snippet.language === "html"));
    expect(fixes.map((f) => f.claim).sort()).toEqual(
      [
        "§:property:blog.alice.example",
        "§:property:imposter-site.test",
        "§:property:unlisted-site.test",
        "§:property:gone-site.test",
        "@bob@guild.example/members",
        "@mallory@bad-issuer.test",
        "https://social.example/@mallory",
      ].sort(),
    );
    try {
      for (const f of fixes) apply(f);
      const after = answered(await resolver().resolveEntity("mallory.example"));
      for (const f of fixes) expect(claimsOf(after).find((c) => c.id === f.claim)?.verified, f.claim).toBe(true);
    } finally {
      for (const f of fixes) ctx.net.change(new URL(f.url).hostname, null);
    }
  });

  it("every entity of the sample network: the errors are the lookup's, and every fix, published, makes its claim verify", async () => {
    const reports = (await Promise.all(ENTITIES.map((d) => checkDomain(resolver(), d, SETTINGS)))).map(answered);
    let applied = 0;
    for (const report of reports) {
      const r = report.result!;
      const failing =
        r.entity.status !== "accepted" || claimsOf(r).some((c) => !c.verified) || r.entity.problems.some((p) => p.severity === "error");
      expect(report.ok, r.entity.domain).toBe(!failing);
      for (const f of findings(report)) {
        expect(f.message, `${r.entity.domain} ${f.code}`).not.toMatch(/socket disconnected|ECONN|ENOTFOUND|getaddrinfo/);
        if (f.severity !== "publish") expect(f.fix, `${r.entity.domain} ${f.code}`).toBeTruthy();
      }
      const fixes = findings(report).filter(
        (f) => f.claim && f.snippet && (f.snippet.document !== undefined || f.snippet.language === "html"),
      );
      if (fixes.length === 0) continue;
      try {
        for (const f of fixes) apply(f);
        const after = answered(await resolver().resolveEntity(r.entity.domain));
        for (const f of fixes) expect(claimsOf(after).find((c) => c.id === f.claim)?.verified, `${r.entity.domain} ${f.claim}`).toBe(true);
        applied += fixes.length;
      } finally {
        for (const f of fixes) ctx.net.change(new URL(f.url).hostname, null);
      }
    }
    expect(applied).toBeGreaterThanOrEqual(7);
  }, 120_000);

  it("a domain whose entity document is wrong gets the document to publish, and publishing it is accepted", async () => {
    const report = answered(await checkDomain(resolver(), "bad-network-id.test", SETTINGS));
    const first = report.documents[0]!.findings[0]!;
    expect(first).toMatchObject({ code: "invalid_network_id", path: "network_id" });
    try {
      ctx.net.change("bad-network-id.test", { files: { "/ident.json": JSON.stringify(first.snippet!.document) } });
      expect(answered(await resolver().resolveEntity("bad-network-id.test")).entity.status).toBe("accepted");
    } finally {
      ctx.net.change("bad-network-id.test", null);
    }
  });

  it("a claim this resolver did not check (its fetch budget spent) is a warning to check again, not an error to fix", async () => {
    const full = answered(await checkDomain(resolver(), "alice.example", SETTINGS));
    expect(full.ok).toBe(true);
    // The entity document and a few claims' fetches, then the budget is spent.
    const report = answered(
      await checkDomain(ctx.resolver({ fetcher: { timeoutMs: 2000 }, limits: { maxFetchesPerQuery: 3 } }), "alice.example", SETTINGS),
    );
    const notChecked = findings(report).filter((f) => f.code === "limit");
    expect(notChecked.length).toBeGreaterThan(0);
    for (const f of notChecked) {
      expect(f).toMatchObject({ severity: "warning", domain: "alice.example", fix: expect.stringMatching(/^Nothing to change.*again/) });
      expect(f.message).toMatch(/^Not checked: this lookup has already started the 3 fetches/);
      expect(f.snippet).toBeUndefined();
    }
    expect(findings(report).filter((f) => f.severity === "error")).toEqual([]);
  });

  it("the CLI: the report in words with the snippet, --json with the same report, exit 1 with errors and 0 without", async () => {
    const broken = await ident(["check", "mallory.example"]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/^ident check mallory\.example: \d+ errors/);
    expect(broken.stdout).toContain("https://blog.alice.example/ident-property.json (property document of blog.alice.example)");
    expect(broken.stdout).toContain("Add this entry to ident_property.ownership:");
    expect(broken.stdout).toContain('"network_id": "§:entity:mallory.example"');
    expect(broken.stdout).not.toContain("\u001b["); // no colour when not on a terminal
    const json = await ident(["check", "mallory.example", "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      schema: CHECK_SCHEMA,
      ok: false,
      target: { kind: "domain", domain: "mallory.example" },
    });
    const fine = await ident(["check", "alice.example"]);
    expect(fine.code).toBe(0);
    expect(fine.stdout).toContain("ident check alice.example: no errors");
  });
});

describe("ident check <file>", () => {
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it("a valid entity document: no errors, and what each counterpart must publish for each claim", async () => {
    const report = await checkFile(path.join(ROOT, "alice.example/ident.json"), SETTINGS);
    expect(report).toMatchObject({ ok: true, errors: 0, target: { kind: "file", document: "entity" } });
    const todo = findings(report).filter((f) => f.severity === "publish");
    expect(todo.map((f) => f.url)).toEqual(
      expect.arrayContaining([
        "https://blog.alice.example/ident-property.json",
        "https://guild.example/members/alice/ident-credential.json",
      ]),
    );
    // What it says to publish is what the network publishes: alice's claims verify against it.
    const blog = todo.find((f) => f.url === "https://blog.alice.example/ident-property.json")!;
    try {
      apply(blog);
      const after = answered(await resolver().resolveEntity("alice.example"));
      expect(after.properties.find((c) => c.id === blog.claim)?.verified).toBe(true);
    } finally {
      ctx.net.change("blog.alice.example", null);
    }
  });

  it("a valid property and a valid credential document: told apart by shape, with what the holder must list", async () => {
    const property = await checkFile(path.join(ROOT, "blog.alice.example/ident-property.json"), SETTINGS);
    expect(property).toMatchObject({ ok: true, target: { document: "property" } });
    expect(findings(property).find((f) => f.url === "https://alice.example/ident.json")?.snippet?.where).toContain("properties");
    const credential = await checkFile(path.join(ROOT, "guild.example/members/alice/ident-credential.json"), SETTINGS);
    expect(credential).toMatchObject({ ok: true, target: { document: "credential" } });
    expect(findings(credential).map((f) => f.message)).toEqual(
      expect.arrayContaining([expect.stringContaining("Serve this file at https://guild.example/members/alice/ident-credential.json")]),
    );
  });

  it.each([
    ["an entity document without network_id", '{"details": {"name": "x"}, "network_id": ""}', "missing_network_id", "entity"],
    [
      "an entity document with a malformed claim",
      '{"network_id": "§:entity:a.example", "properties": [{"id": "a.example"}]}',
      "invalid_entry",
      "entity",
    ],
    ["a property document without ownership", '{"ident_property": {"id": "§:property:a.example"}}', "invalid_document", "property"],
    [
      "a credential document without a title",
      '{"ident_entity_id": "§:entity:a.example", "ident_credential": {}}',
      "invalid_document",
      "credential",
    ],
    ["not JSON", "network_id: §:entity:a.example", "invalid_json", null],
    ["an unknown shape", '{"name": "Alice"}', "unknown_document", null],
    ["a JSON array", "[1, 2]", "unknown_document", null],
  ])("%s: exit 1, the error said with its fix", async (_, text, code, kind) => {
    const p = file(`${code}-${kind}.json`, text);
    const report = await checkFile(p, SETTINGS);
    expect(report.ok).toBe(false);
    expect(report.target).toMatchObject({ kind: "file", document: kind });
    const f = findings(report).find((x) => x.code === code)!;
    expect(f.severity).toBe("error");
    expect(f.fix).toBeTruthy();
    const cli = await ident(["check", p]);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain(`[${code}]`);
  });

  it("a 2 MB file: refused as the resolver would refuse it, exit 1", async () => {
    const p = file(
      "huge.json",
      JSON.stringify({ network_id: "§:entity:a.example", details: { description: "x".repeat(2 * 1024 * 1024) } }),
    );
    const report = await checkFile(p, SETTINGS);
    expect(findings(report)[0]).toMatchObject({ code: "too_large", severity: "error" });
    expect((await ident(["check", p])).code).toBe(1);
  });

  it("a folder, a missing file, an id instead of a domain, nothing: exit 2, said in one line", async () => {
    const folder = path.join(dir, "folder");
    mkdirSync(folder, { recursive: true });
    for (const [args, words] of [
      [["check", folder], "is a directory"],
      [["check", path.join(dir, "missing.json")], "no file at"],
      [["check", "§:property:blog.alice.example"], "check takes a domain"],
      [["check"], "expected: check <domain | file>"],
    ] as const) {
      const out = await ident([...args]);
      expect(out.code, args.join(" ")).toBe(2);
      expect(out.stderr).toContain(words);
    }
  });

  it("checkText reads what it is given: the same parsers as a lookup, nothing fetched", () => {
    const valid = readFileSync(path.join(ROOT, "mallory.example/ident.json"), "utf8");
    const report = checkText(valid, "mallory.json", SETTINGS);
    expect(
      findings(report)
        .filter((f) => f.severity === "error")
        .map((f) => f.code),
    ).toEqual(["invalid_entry", "duplicate", "invalid_entry", "unsafe_url"]);
  });
});
