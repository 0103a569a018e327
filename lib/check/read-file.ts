/**
 * `ident check <file>` (docs/publishing.md#check): a file read from disk, then checked as its text is
 * (./file.ts). Apart, so that checking a document's text needs no `node:` module.
 */
import { readFile, stat } from "node:fs/promises";
import { DEFAULTS } from "../limits.ts";
import type { Settings } from "../present/explain.ts";
import { checkText } from "./file.ts";
import { buildReport, explained, type CheckReport, type DocumentReport, type FileKind, type Finding } from "./report.ts";

/** A file that cannot be checked at all: a usage error (exit 2), not a finding. */
export class UnreadableFile extends Error {}

/** Reads and checks one file. Throws {@link UnreadableFile} for a path that is missing or not a file. */
export async function checkFile(path: string, settings: Settings): Promise<CheckReport> {
  const info = await stat(path).catch(() => null);
  if (!info) throw new UnreadableFile(`no file at ${path}`);
  if (!info.isFile()) throw new UnreadableFile(`${path} is ${info.isDirectory() ? "a directory" : "not a regular file"}, not a document`);
  const target = (document: FileKind | null) => ({ kind: "file" as const, path, document });
  const own = (findings: Finding[]): DocumentReport => ({ role: "entity", domain: "", url: path, findings });
  // The same cap a fetch applies (docs/decisions.md#fetching): a document the resolver would refuse is refused here.
  if (info.size > DEFAULTS.maxBytes.json) {
    const message = `${path} is ${info.size} bytes; the resolver reads at most ${DEFAULTS.maxBytes.json} bytes of a document`;
    return buildReport(target(null), [own([explained("error", "too_large", message, settings)])]);
  }
  const text = new TextDecoder("utf-8").decode(await readFile(path));
  return checkText(text, path, settings);
}
