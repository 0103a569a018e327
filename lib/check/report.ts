/**
 * The publisher's check (docs/publishing.md#check): a report grouped by the document to edit, each
 * finding with what is wrong, what it means, how to fix it and, where there is one, the exact text to
 * publish. Built by lib/check/live.ts (a domain, over the network) and lib/check/file.ts (a local file).
 */
import { explainProblem, reasonAnchor, said, type CatalogueSection, type Settings } from "../present/explain.ts";
import type { EntityResult } from "../result/record.ts";
import { extend } from "../objects.ts";

export const CHECK_SCHEMA = "ident-resolver/check@1";

/** What to publish, ready to copy. */
export type Snippet = {
  /** Where to put it, in words: "Add to ident_property.ownership". */
  where: string;
  language: "json" | "html";
  /** The text to add or change. */
  text: string;
  /** The whole document to publish at the URL with this change made, when it can be given. */
  document?: unknown;
};

/**
 * One finding. `publish` is not a fault of the checked document: it is what a counterpart must
 * publish for a claim of an offline file to verify.
 */
export type Finding = {
  severity: "error" | "warning" | "publish";
  code: string;
  /** What is wrong, or what must be published, in plain words. */
  message: string;
  /** Where in the document, as a JSON path. */
  path?: string;
  /** The claim this is about. */
  claim?: string;
  /** The catalogue's entry (`/reasons#{anchor}`). */
  anchor?: string;
  means?: string;
  fix?: string;
  /** The library's own words, for a failed connection. */
  detail?: string;
  snippet?: Snippet;
};

export type DocumentRole = "entity" | "property" | "credential" | "profile page" | "file";

/** One document to edit, with everything to change in it. */
export type DocumentReport = {
  role: DocumentRole;
  /** The site that serves it: its owner is who must make the change. */
  domain: string;
  /** The URL that must serve it (or the local file). */
  url: string;
  findings: Finding[];
};

export type FileKind = "entity" | "property" | "credential";

export type CheckReport = {
  schema: typeof CHECK_SCHEMA;
  target: { kind: "domain"; domain: string } | { kind: "file"; path: string; document: FileKind | null };
  /** No errors (warnings allowed): exit 0. */
  ok: boolean;
  errors: number;
  warnings: number;
  documents: DocumentReport[];
  /** The lookup's result, for a domain: the card and the JSON-LD as a lookup shows them. */
  result?: EntityResult;
};

/** A finding explained by the catalogue entry of `code` (docs/decisions.md#reasons). */
export function explained(
  severity: Finding["severity"],
  code: string,
  message: string,
  settings: Settings,
  extra: Partial<Finding> = {},
  prefer?: CatalogueSection,
): Finding {
  const explained = explainProblem(code, severity === "warning" ? "warning" : "error", prefer);
  const finding: Finding = { severity, code, message, ...extra };
  if (explained) {
    finding.anchor = reasonAnchor(explained.section, code);
    finding.means ??= said(explained.entry.means, settings);
    finding.fix ??= said(explained.entry.fix, settings);
  }
  return finding;
}

/** Groups findings by document, in the order the documents were first met, and counts them. */
export function buildReport(target: CheckReport["target"], documents: DocumentReport[], result?: EntityResult): CheckReport {
  const merged = new Map<string, DocumentReport>();
  for (const doc of documents) {
    const key = `${doc.role} ${doc.url}`;
    const seen = merged.get(key);
    if (seen) seen.findings.push(...doc.findings);
    else merged.set(key, extend(doc, { findings: [...doc.findings] }));
  }
  const all = [...merged.values()];
  const count = (s: Finding["severity"]) => all.reduce((n, d) => n + d.findings.filter((f) => f.severity === s).length, 0);
  const errors = count("error");
  return {
    schema: CHECK_SCHEMA,
    target,
    ok: errors === 0,
    errors,
    warnings: count("warning"),
    documents: all,
    ...(result ? { result } : {}),
  };
}

/** A JSON value as a publisher would paste it. */
export const pretty = (value: unknown) => JSON.stringify(value, null, 2);
