import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createResolver } from "../node.ts";
import { CASES, PROTOCOL_RULES, rulesOf } from "./cases.ts";
import { runConformance, type ConformanceAdapter } from "./runner.ts";

/** This resolver's adapter, as docs/library.md#conformance shows it to another implementation. */
const adapter: ConformanceAdapter = (query, publishers) =>
  createResolver({ connectTo: publishers.connectTo, ca: [publishers.caPem], env: {}, fetchTimeoutMs: 2000 }).resolve(query);

describe("the conformance cases (docs/library.md#conformance)", () => {
  it("name the rules docs/protocol.md has: V1–V7, each row of its Errors table, rel=me and serving", () => {
    const protocol = readFileSync(new URL("../../docs/protocol.md", import.meta.url), "utf8");
    const rules = [...protocol.matchAll(/^### (V\d):/gm)].map((m) => m[1]);
    const errors = protocol.slice(protocol.indexOf("## Errors"), protocol.indexOf("## Rel=me"));
    const rows = [...errors.matchAll(/^\| ([^|]+?) +\|/gm)].map((m) => m[1] ?? "").filter((r) => r !== "condition" && !r.startsWith("---"));
    const derived = [...rules, ...rows.map((r) => `Errors: ${r.replaceAll("`", "")}`), "rel=me", "Serving"];
    expect([...PROTOCOL_RULES].sort()).toEqual(derived.sort());
  });
  it("cover every rule of docs/protocol.md at least once, each case naming one of them", () => {
    const covered = new Set(CASES.flatMap(rulesOf));
    expect(PROTOCOL_RULES.filter((r) => !covered.has(r))).toEqual([]);
    expect(CASES.filter((c) => !PROTOCOL_RULES.includes(c.rule)).map((c) => c.id)).toEqual([]);
    expect(new Set(CASES.map((c) => c.id)).size).toBe(CASES.length);
    console.log(`conformance: ${CASES.length} cases covering ${covered.size} rules of docs/protocol.md`);
  });
  it("this resolver passes every one", async () => {
    const report = await runConformance(adapter);
    expect(report.outcomes.filter((o) => !o.passed)).toEqual([]);
    expect(report.passed).toBe(CASES.length);
  }, 30_000);
  it("the runner fails a resolver that gets verdicts wrong, saying which and why", async () => {
    // A resolver that verifies every claim it is given and accepts every entity.
    const credulous: ConformanceAdapter = async (query, publishers) => {
      const record = await createResolver({
        connectTo: publishers.connectTo,
        ca: [publishers.caPem],
        env: {},
        fetchTimeoutMs: 2000,
      }).resolve(query);
      if ("error" in record) return record;
      const yes = <T extends object>(claims: T[]) => claims.map((c) => Object.assign({}, c, { verified: true }));
      return {
        results: record.results.map((r) => ({
          entity: Object.assign({}, r.entity, { status: "accepted" }),
          properties: yes(r.properties),
          credentials: yes(r.credentials),
          connections: yes(r.connections),
          focus: r.focus ? { verified: true } : undefined,
        })),
      };
    };
    const report = await runConformance(credulous);
    const failed = report.outcomes.filter((o) => !o.passed);
    expect(failed.map((o) => o.id)).toContain("errors-not-both-listed");
    expect(failed.find((o) => o.id === "errors-not-both-listed")?.problems).toEqual([
      "errors-not-listed.test: properties[0] should not verify",
    ]);
    expect(failed.find((o) => o.id === "v1-not-an-object")?.problems[0]).toMatch(/should not be accepted/);
    const thrown = await runConformance(
      async () => {
        throw new Error("not implemented");
      },
      { cases: CASES.slice(0, 1) },
    );
    expect(thrown.outcomes[0]).toMatchObject({ passed: false, problems: ["the adapter threw: not implemented"] });
    // An adapter that never gives up, on the case whose publisher never answers, fails at the runner's deadline.
    const timeoutCase = CASES.filter((c) => c.id === "errors-timeout");
    const patient = await runConformance(() => new Promise(() => undefined), { cases: timeoutCase, caseDeadlineMs: 500 });
    expect(patient.outcomes[0]).toMatchObject({ passed: false, problems: ["the adapter threw: no answer within 0.5 s"] });
    // One that asks again after its deadline breaks "no retry".
    const retrying: ConformanceAdapter = async (query, publishers) => {
      await adapter(query, publishers);
      return adapter(query, publishers);
    };
    const retried = await runConformance(retrying, { cases: timeoutCase });
    expect(retried.outcomes[0]?.problems).toEqual(["https://errors-timeout.test/ident.json was requested 2 times, at most 1 expected"]);
  }, 30_000);
});
