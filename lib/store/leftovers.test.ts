import { describe, expect, it } from "vitest";
import { fileNumber, leftoverFiles } from "./leftovers.ts";

describe("the files of a database's folder (docs/deploying.md#moving-the-index)", () => {
  it.each([
    ["16618", 16618],
    ["16618_fsm", 16618],
    ["16618_vm", 16618],
    ["16618_init", 16618],
    ["16618.1", 16618],
    ["16618_fsm.2", 16618],
    ["t0_16674", 16674],
    ["t3_16674.1", 16674],
    ["PG_VERSION", null],
    ["pg_filenode.map", null],
    ["pg_internal.init", null],
    ["16618_other", null],
    ["16618.", null],
    ["t_16618", null],
  ])("%s is the file of relation number %s", (name, n) => {
    expect(fileNumber(name)).toBe(n);
  });

  it("a leftover is a relation's file no relation owns, never one of PostgreSQL's own catalogue", () => {
    const names = [
      "1259",
      "2619_fsm",
      "16384",
      "16384_vm",
      "16390",
      "16390.1",
      "16391_fsm",
      "t0_16400",
      "t0_16384",
      "PG_VERSION",
      "pg_filenode.map",
    ];
    expect(leftoverFiles(names, new Set([1259, 16384]))).toEqual(["16390", "16390.1", "16391_fsm", "t0_16400"]);
  });
});
