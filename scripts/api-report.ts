/**
 * `npm run api-report`: the package's public API as the compiler sees it (docs/library.md#versions),
 * written to lib/api-report.md. Each entry that semver covers, each of its exports with its type in
 * full; test/package/api-report.test.ts fails when the API differs from the report checked in, so a
 * change of the public API is always a change of this file too, seen in review.
 * API Extractor would do this, but reads one entry point per run, and none of its reports would show
 * the entries side by side.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const REPORT = path.join(ROOT, "lib", "api-report.md");

/** The entries semver covers (docs/library.md#the-entries). */
export const PUBLIC_ENTRIES = [".", "./node", "./check", "./conformance"] as const;

const FLAGS = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType;

/** A declaration as written, on one line, its comments left out. */
const written = (node: ts.Node) => node.getText().replace(/\s+/g, " ");

/** One export's lines: its type, its value, or both (a zod schema and the type inferred from it share a name). */
function describe(checker: ts.TypeChecker, exported: ts.Symbol): string[] {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const name = exported.getName();
  const lines: string[] = [];
  // A type as written, naming the types it is made of; a value by the type the compiler gives it.
  for (const declaration of symbol.declarations ?? []) {
    if (ts.isTypeAliasDeclaration(declaration) || ts.isInterfaceDeclaration(declaration)) lines.push(written(declaration));
  }
  if (symbol.flags & ts.SymbolFlags.Class) {
    const instance = checker.getDeclaredTypeOfSymbol(symbol);
    const members = checker.getPropertiesOfType(instance).map((p) => p.getName());
    lines.push(`class ${name} { ${members.join("; ")} }`);
  } else if (symbol.flags & ts.SymbolFlags.Value) {
    const declaration = symbol.valueDeclaration ?? symbol.declarations?.[0];
    if (declaration)
      lines.push(`${name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, declaration), undefined, FLAGS)};`);
  }
  return lines;
}

/** The report's text, from the package's sources. */
export function apiReport(): string {
  const manifest = JSON.parse(readFileSync(path.join(ROOT, "lib", "package.json"), "utf8")) as {
    version: string;
    exports: Record<string, string>;
  };
  const files = PUBLIC_ENTRIES.map((entry) => path.join(ROOT, "lib", manifest.exports[entry] ?? ""));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    types: ["node"],
  });
  const checker = program.getTypeChecker();
  const sections = PUBLIC_ENTRIES.map((entry, i) => {
    const source = program.getSourceFile(files[i] ?? "");
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`api-report: no module for ${entry}`);
    const exports = checker.getExportsOfModule(module).sort((a, b) => a.getName().localeCompare(b.getName()));
    const name = entry === "." ? "ident-resolver" : `ident-resolver/${entry.slice(2)}`;
    return [`## \`${name}\``, "", "```ts", ...exports.flatMap((e) => describe(checker, e)), "```", ""].join("\n");
  });
  return [
    "# The public API of ident-resolver",
    "",
    "Written by `npm run api-report` (scripts/api-report.ts); a test fails when it differs from the",
    "package's sources. Review a change here as a change of what semver promises (docs/library.md#versions).",
    "",
    ...sections,
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(REPORT, apiReport());
  console.log(`api-report: ${path.relative(ROOT, REPORT)}`);
}
