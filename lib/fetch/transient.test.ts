/** The one definition of a transient failure (lib/fetch/transient.ts), for the cache, the fleet and the index. */
import { describe, expect, it } from "vitest";
import { isTransientFailure } from "./transient.ts";

describe("isTransientFailure", () => {
  it.each([
    ["timeout", null, true],
    ["unreachable", null, true],
    ["not_found", 429, true],
    ["not_found", 500, true],
    ["not_found", 503, true],
    ["not_found", 404, false],
    ["not_found", 410, false],
    ["not_found", null, false],
    ["too_large", null, false],
    ["blocked", null, false],
    ["invalid_document", 200, false],
  ] as const)("%s, HTTP %s → %s", (status, httpStatus, transient) => {
    expect(isTransientFailure({ status, httpStatus })).toBe(transient);
  });
});
