/**
 * The order of the unit tests' files: the few that take a minute or more first, then the rest as
 * Vitest orders them (by past durations, or by size on a fresh clone, as in CI). On a fresh clone a
 * long file small in bytes (export-cli.test.ts, about 2 minutes) otherwise started last and ran
 * alone at the end while the other worker had nothing left.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Files of a minute or more on two cores (a run of 2026-11-28), the longest first. */
const LONG = [
  "test/integration/store.test.ts",
  "test/integration/export-cli.test.ts",
  "test/integration/import-failed.test.ts",
  "test/integration/export.test.ts",
  "test/integration/cli.test.ts",
];

export default class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONG.findIndex((name) => f.moduleId.endsWith(name));
      return i < 0 ? LONG.length : i;
    };
    // Array.prototype.sort is stable: the rest keep Vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
