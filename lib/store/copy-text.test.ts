import { describe, expect, it } from "vitest";
import { CopyReader, copyLine, copyRows, isoTime, sqlLiteral } from "./copy-text.ts";

describe("COPY's text format", () => {
  const hostile = ["", "plain", "tab\there", "new\nline", "cr\rhere", "back\\slash", "\\N", "\\", "ends with \\", "é 山 🙂", "'quoted'"];

  it("a row written is read back as it was, whatever its text holds", () => {
    const row = [...hostile, null];
    const line = copyLine(row);
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(/[\n\r]/);
    expect(copyRows(line)).toEqual([row]);
  });

  it("null is \\N, and the text \\N is not null", () => {
    expect(copyLine([null, "\\N", true, false, 7])).toBe("\\N\t\\\\N\tt\tf\t7\n");
    expect(copyRows("\\N\t\\\\N\n")).toEqual([[null, "\\N"]]);
  });

  it("reads the escapes COPY writes: \\b \\f \\v too", () => {
    expect(copyRows("a\\bb\\fc\\vd\\te\n")).toEqual([["a\bb\fc\vd\te"]]);
  });

  it("the reader goes field by field, row by row, and says when a row has no more", () => {
    const reader = new CopyReader("a\t\\N\t\nb\n");
    expect(reader.row()).toBe(true);
    expect([reader.field(), reader.field(), reader.more(), reader.field(), reader.more()]).toEqual(["a", null, true, "", false]);
    expect(reader.row()).toBe(true);
    expect(reader.field()).toBe("b");
    expect(reader.row()).toBe(false);
    expect(copyRows("")).toEqual([]);
  });

  it("an SQL literal doubles its quotes and leaves backslashes (standard_conforming_strings)", () => {
    expect(sqlLiteral("o'neil\\x")).toBe("'o''neil\\x'");
  });

  it("a time as COPY writes it in UTC becomes toISOString's, milliseconds cut not rounded", () => {
    expect(isoTime("2026-01-01 10:00:00+00")).toBe("2026-01-01T10:00:00.000Z");
    expect(isoTime("2026-01-01 10:00:00.5+00")).toBe("2026-01-01T10:00:00.500Z");
    expect(isoTime("2026-01-01 10:00:00.123999+00")).toBe("2026-01-01T10:00:00.123Z");
    for (const odd of ["2026-01-01 10:00:00+01", "2026-01-01T10:00:00Z", "12026-01-01 10:00:00+00", "2026-01-01 10:00:00 BC"]) {
      expect(() => isoTime(odd), odd).toThrow(/a time the export cannot write/);
    }
  });
});
