import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REASONS } from "../protocol/reasons.ts";
import { EntityStatus } from "../result/record.ts";
import { CATALOGUE, explainProblem, reasonFix, reasonText, statusFix, statusText, said } from "./explain.ts";

/** Every `error("code"` and `warning("code"` written in lib/: the problem codes the resolver can emit. */
function emittedCodes(): { code: string; severity: "error" | "warning" }[] {
  const root = path.join(__dirname, "..");
  const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
  const found = new Map<string, "error" | "warning">();
  for (const file of files) {
    const text = readFileSync(path.join(root, file), "utf8");
    for (const m of text.matchAll(/\b(error|warning)\(\s*"([a-z_]+)"/g)) found.set(`${m[1]}:${m[2]}`, m[1] as "error" | "warning");
  }
  return [...found].map(([key, severity]) => ({ code: key.split(":")[1]!, severity }));
}

describe("the catalogue of reasons (docs/decisions.md#reasons)", () => {
  it("states the configured timeout, not a fixed one", () => {
    expect(reasonFix("timeout", { fetchTimeoutMs: 6000 })).toContain("within 6 seconds");
    expect(statusFix("timeout", { fetchTimeoutMs: 2500 })).toContain("within 2.5 seconds");
    expect(reasonFix("timeout", { fetchTimeoutMs: 10_000 })).toContain("within 10 seconds");
  });
  it("has what it means and how to fix it for every reason, every entity status and every code lib/ emits", () => {
    const codes = emittedCodes();
    expect(codes.length).toBeGreaterThan(10);
    for (const reason of REASONS) expect(explainProblem(reason, "error")?.section).toBe("claim");
    for (const status of EntityStatus.options.filter((s) => s !== "accepted")) {
      expect(CATALOGUE.find((s) => s.anchor === "entity")!.entries[status], status).toBeDefined();
    }
    for (const { code, severity } of codes) expect(explainProblem(code, severity), `${severity} ${code}`).not.toBeNull();
  });
  it("knows no code it does not list, not even one named like an object's property", () => {
    for (const code of ["constructor", "__proto__", "toString", "hasOwnProperty", "nope"]) {
      for (const severity of ["error", "warning"] as const) expect(explainProblem(code, severity), `${severity} ${code}`).toBeNull();
      for (const prefer of CATALOGUE.map((s) => s.anchor)) expect(explainProblem(code, "error", prefer), `${prefer} ${code}`).toBeNull();
    }
  });
  // docs/decisions.md#rendering: a status or reason read from the index or a file may be any text.
  const NOT_LISTED = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "", "Accepted", "nope"];
  it.each(NOT_LISTED)("has no words for the status or reason %j, rather than a prototype member", (value) => {
    const settings = { fetchTimeoutMs: 10_000 };
    expect([statusText(value), reasonText(value), statusFix(value, settings), reasonFix(value, settings)]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
  it("has words for every status and reason of the closed sets", () => {
    for (const status of EntityStatus.options) expect(statusText(status), status).toMatch(/^[a-z]/);
    for (const reason of REASONS) expect(reasonText(reason), reason).toMatch(/^[a-z]/);
    expect(statusText("unreachable")).toBe("the domain could not be reached");
    expect(reasonText("not_listed")).toBe("the property does not name this entity as an owner");
  });
  it("says each in sentences", () => {
    for (const section of CATALOGUE) {
      for (const [code, entry] of Object.entries(section.entries)) {
        for (const text of [entry.means, entry.fix]) expect(said(text, { fetchTimeoutMs: 10_000 }), code).toMatch(/^[A-Z"].*[.)]$/s);
      }
    }
  });
});
