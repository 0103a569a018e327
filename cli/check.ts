/**
 * `ident check <domain | file> [--json]` (docs/publishing.md#check): the report in words, grouped by
 * the document to edit, colour only on a terminal. Exit 0 with no errors, 1 with errors, 2 for usage.
 */
import { stat } from "node:fs/promises";
import { parseConfig, configErrorMessage } from "ident-resolver/setup";
import { checkFile, UnreadableFile } from "ident-resolver/check";
import { checkDomain } from "ident-resolver/check";
import type { CheckReport, DocumentReport, Finding } from "ident-resolver/check";
import { claimCounts } from "ident-resolver";
import { answerRefusal } from "ident-resolver/traffic";
import { isRefusal } from "ident-resolver/traffic";
import { parseQuery } from "ident-resolver";
import { createConfiguredResolver } from "ident-resolver/setup";
import type { Io } from "./io";
import { printable } from "./print";

const ROLE: Record<DocumentReport["role"], string> = {
  entity: "entity document",
  property: "property document",
  credential: "credential document",
  "profile page": "profile page",
  file: "a file that is none of the three documents",
};

type Paint = (code: string, text: string) => string;

function paintFor(color: boolean): Paint {
  return color ? (code, text) => `\u001b[${code}m${text}\u001b[0m` : (_, text) => text;
}

const MARK: Record<Finding["severity"], [string, string]> = { error: ["✗", "31"], warning: ["!", "33"], publish: ["→", "36"] };

function findingLines(f: Finding, paint: Paint): string[] {
  const [mark, colour] = MARK[f.severity];
  const where = [f.claim ? printable(f.claim) : null, f.path ? `at ${printable(f.path)}` : null].filter(Boolean).join(" ");
  const code = f.severity === "publish" ? "" : ` [${f.code}]`;
  const lines = [`  ${paint(colour, mark)} ${where ? `${where}: ` : ""}${printable(f.message)}${code}`];
  if (f.detail) lines.push(`      detail: ${printable(f.detail)}`);
  if (f.means && f.severity !== "publish") lines.push(`      ${f.means}`);
  if (f.fix && f.severity !== "publish") lines.push(`      ${paint("1", "Fix:")} ${f.fix}`);
  if (f.snippet) {
    lines.push(`      ${f.snippet.where}:`);
    for (const line of f.snippet.text.split("\n")) lines.push(`        ${paint("32", printable(line))}`);
  }
  return lines;
}

/** The readable report. */
export function formatReport(report: CheckReport, color = false): string {
  const paint = paintFor(color);
  const target = report.target.kind === "domain" ? report.target.domain : printable(report.target.path);
  const kind = report.target.kind === "file" && report.target.document ? ` (${report.target.document} document)` : "";
  const verdict = report.ok
    ? paint("32", `no errors${report.warnings ? `, ${report.warnings} warning${report.warnings === 1 ? "" : "s"}` : ""}`)
    : paint(
        "31",
        `${report.errors} error${report.errors === 1 ? "" : "s"}${report.warnings ? `, ${report.warnings} warning${report.warnings === 1 ? "" : "s"}` : ""}`,
      );
  const lines = [`ident check ${target}${kind}: ${verdict}`];
  for (const doc of report.documents) {
    const owner = doc.domain ? ` of ${doc.domain}` : "";
    lines.push("", `${paint("1", printable(doc.url))} (${ROLE[doc.role]}${owner})`);
    if (doc.findings.length === 0) lines.push(`  ${paint("32", "✓")} nothing to change`);
    for (const f of doc.findings) lines.push(...findingLines(f, paint));
  }
  if (report.target.kind === "domain" && report.result?.entity.status === "accepted") {
    // docs/decisions.md#counting-claims: each claim once, as the badge counts them.
    const { verified, total } = claimCounts(report.result);
    lines.push("", `${verified} of ${total} claims verified. Each [code] is explained on the /reasons page of the web app.`);
  }
  return `${lines.join("\n")}\n`;
}

/** Whether the argument names a file: it exists, or it looks like a path. */
async function isFileArgument(arg: string): Promise<boolean> {
  if (
    await stat(arg).then(
      () => true,
      () => false,
    )
  )
    return true;
  return arg.includes("/") || arg.includes("\\") || /\.json$/i.test(arg);
}

export async function check(target: string, json: boolean, env: Readonly<Record<string, string | undefined>>, io: Io): Promise<number> {
  const config = parseConfig(env);
  if (!config.ok) {
    io.err(`${configErrorMessage(config.errors)}\n`);
    return 2;
  }
  const settings = { fetchTimeoutMs: config.config.fetchTimeoutMs };
  let report: CheckReport;
  if (await isFileArgument(target)) {
    try {
      report = await checkFile(target, settings);
    } catch (err) {
      if (err instanceof UnreadableFile) {
        io.err(`ident: cannot check ${printable(target)}: ${printable(err.message)}\n`);
        return 2;
      }
      throw err;
    }
  } else {
    const query = parseQuery(target);
    if (!query.ok || (query.query.kind !== "domain" && query.query.kind !== "url" && query.query.kind !== "network_id")) {
      io.err(`ident: check takes a domain (alice.example) or a file (./ident.json), not ${printable(JSON.stringify(target))}\n`);
      return 2;
    }
    const resolver = createConfiguredResolver(config.config, {});
    try {
      const checked = await checkDomain(resolver, query.query.domain, settings, "cli");
      // docs/architecture.md#traffic: not checked is said in the words every refusal has.
      if (isRefusal(checked)) {
        io.err(`ident: not checked: ${answerRefusal(checked).message}\n`);
        return 1;
      }
      report = checked;
    } finally {
      await resolver.close();
    }
  }
  io.out(json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report, io.color === true));
  return report.ok ? 0 : 1;
}
