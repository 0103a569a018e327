/** The public API report (docs/library.md#versions): checked in, and always what the sources export. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { apiReport, REPORT } from "../../scripts/api-report";

describe("lib/api-report.md", () => {
  it("is the public API as the sources export it; after a change of the API, npm run api-report writes it again", () => {
    expect(
      apiReport() === readFileSync(REPORT, "utf8"),
      "the public API changed: run npm run api-report and review lib/api-report.md",
    ).toBe(true);
  }, 60_000);
});
