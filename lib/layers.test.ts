/**
 * The resolver's folders depend one way (docs/architecture.md): each folder of `lib/` (and each
 * module at its root) imports only those below it, so the graph of their imports has no cycle. A
 * cycle is named with the import that closes it.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url);
const files = execFileSync("git", ["ls-files", "lib"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((f) => /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f));

/** A module's node: its folder under lib/, or itself when it sits at lib/'s root. */
const nodeOf = (file: string) => {
  const parts = file.split("/");
  return parts.length > 2 ? `lib/${parts[1]}/` : file;
};

/** Each node's imports of other nodes, with one file that makes each. */
function graph(): Map<string, Map<string, string>> {
  const edges = new Map<string, Map<string, string>>();
  for (const file of files) {
    const text = readFileSync(new URL(file, root), "utf8");
    for (const [, spec] of text.matchAll(/^(?:import|export)\b[^;]*?from\s+"(\.{1,2}\/[^"]+)"/gm)) {
      if (!spec) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      const resolved = files.find((f) => f === `${target}.ts` || f === `${target}.tsx` || f === `${target}/index.ts`);
      if (!resolved) continue;
      const [from, to] = [nodeOf(file), nodeOf(resolved)];
      if (from === to) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      edges.get(from)?.set(to, file);
    }
  }
  return edges;
}

describe("lib/'s folders depend one way", () => {
  it("the graph of their imports has no cycle", () => {
    const edges = graph();
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (node: string, trail: string[]) => {
      state.set(node, "open");
      for (const [next, file] of edges.get(node) ?? []) {
        if (state.get(next) === "open") cycles.push(`${[...trail, node, next].join(" → ")} (closed by ${file})`);
        else if (!state.has(next)) visit(next, [...trail, node]);
      }
      state.set(node, "done");
    };
    for (const node of edges.keys()) if (!state.has(node)) visit(node, []);
    expect(cycles).toEqual([]);
  });
  it("the fetcher knows nothing of the fleet, the store, the resolver or the discovery above it", () => {
    const above = ["lib/fleet/", "lib/store/", "lib/resolver/", "lib/discovery/", "lib/setup.ts"];
    const fetchImports = [...(graph().get("lib/fetch/") ?? new Map<string, string>()).keys()];
    expect(fetchImports.filter((n) => above.includes(n))).toEqual([]);
  });
});
