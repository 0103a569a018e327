/**
 * How long a function may be (docs/architecture.md#how-the-code-is-shaped): none over 80 lines in the
 * code that ships (lib/, web/, app/, components/, cli/; tests aside), and no more than 15 over 60.
 * Counted with TypeScript's own parser, from a function's first line to its last, comments included:
 * every function, method, accessor and arrow function, nested ones counted on their own too.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url);
const FOLDERS = ["lib", "web", "app", "components", "cli"];
const LONGEST = 80;
const LONG = 60;
const LONG_AT_MOST = 15;

type Length = { where: string; name: string; lines: number };

/** Every function's length in `text`, named where it can be. */
function functionLengths(file: string, text: string): Length[] {
  const kind = file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const lengths: Length[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      lengths.push({ where: `${file}:${first + 1}`, name: nameOf(node), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lengths;
}

function nameOf(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name) return named.name.getText();
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))) return parent.name.getText();
  return "(anonymous)";
}

const shipped = () =>
  execFileSync("git", ["ls-files", ...FOLDERS], { cwd: root, encoding: "utf8" })
    .split("\n")
    .filter((f) => /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f) && !f.endsWith(".d.ts"));

const listed = (xs: Length[]) => xs.map((x) => `${x.lines} lines: ${x.name} (${x.where})`).join("\n");

describe("function length", () => {
  const all = shipped().flatMap((f) => functionLengths(f, readFileSync(new URL(f, root), "utf8")));

  it(`no function in ${FOLDERS.join(", ")} is over ${LONGEST} lines`, () => {
    expect(listed(all.filter((x) => x.lines > LONGEST))).toBe("");
  });

  it(`no more than ${LONG_AT_MOST} are over ${LONG}`, () => {
    const long = all.filter((x) => x.lines > LONG).sort((a, b) => b.lines - a.lines);
    expect(long.length, listed(long)).toBeLessThanOrEqual(LONG_AT_MOST);
  });

  it("counts what it should: a function's lines, nested ones on their own, methods and arrows alike", () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join("\n");
    const text = [
      `export function outer() {`, // 1
      body(3),
      `  const inner = () => {`, // 5
      body(2),
      `  };`, // 8
      `}`, // 9
      `class K { m() {`, // 10
      body(1),
      `} }`,
    ].join("\n");
    expect(functionLengths("x.ts", text).map((x) => [x.name, x.lines])).toEqual([
      ["outer", 9],
      ["inner", 4],
      ["m", 3],
    ]);
    // A declaration without a body (an overload) is not a function of its own.
    expect(functionLengths("y.ts", "export function f(a: string): void;\nexport function f(a: unknown) {\n  return a;\n}")).toHaveLength(1);
  });
});
