/**
 * The cursors of the feed of every change (docs/api.md#changes, docs/decisions.md#the-order-of-changes),
 * read before any query: a position as the server writes it, a cursor of the older form, and what is
 * neither, refused.
 */
import { describe, expect, it } from "vitest";
import { ChangeCursorText, cursorOf, decodeChangeCursor } from "./overview.ts";

const older = (tuple: unknown) => Buffer.from(JSON.stringify(tuple)).toString("base64url");
const AT = "2026-05-01T08:00:00.000Z";

describe("a change's cursor", () => {
  it("is `p` and its position, short whatever the change holds, and reads back as it", () => {
    expect(cursorOf({ position: "1234" })).toBe("p1234");
    expect(decodeChangeCursor("p1234")).toEqual({ position: "1234" });
    expect(decodeChangeCursor(`p${"9".repeat(15)}`)).toEqual({ position: "9".repeat(15) });
  });

  it("of the older form reads as the change it names", () => {
    const key = `https://long.example/${"a".repeat(1000)}`;
    expect(decodeChangeCursor(older([AT, "a.example", "connections", key]))).toEqual({ named: [AT, "a.example", "connections", key] });
  });

  it.each([
    ["empty", ""],
    ["a NUL", "p1\u0000"],
    ["position 0", "p0"],
    ["a leading zero", "p01"],
    ["16 digits", `p${"1".repeat(16)}`],
    ["a sign", "p-1"],
    ["not base64url", "%%%"],
    ["longer than 2,048 characters", "a".repeat(2049)],
    ["base64url of no JSON", "bogus"],
    ["an older one with a NUL in its domain", older([AT, "a.example\u0000", "entity", ""])],
    ["an older one with a NUL in its claim", older([AT, "a.example", "credentials", "@a@b.example/\u0000"])],
    ["an older one with a lone surrogate", older([AT, "a.example", "credentials", "\ud800"])],
    ["an older one of the year 0000", older(["0000-01-01T00:00:00.000Z", "a.example", "entity", ""])],
    ["an older one of 30 February", older(["2026-02-30T00:00:00.000Z", "a.example", "entity", ""])],
    ["an older one of another time's form", older(["2026-05-01T08:00:00Z", "a.example", "entity", ""])],
    ["an older one of an unknown kind", older([AT, "a.example", "friends", "x"])],
    ["an older one of three parts", older([AT, "a.example", "entity"])],
  ])("is refused when %s, by the parameter's schema too", (_, text) => {
    expect(decodeChangeCursor(text)).toBeNull();
    expect(ChangeCursorText.safeParse(text).success).toBe(false);
  });
});
