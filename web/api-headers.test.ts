/**
 * The API's headers for builders (docs/api.md): the rate-limit headers read back by a Structured
 * Fields parser (RFC 9651, which draft-ietf-httpapi-ratelimit-headers-11 writes them in), ETag
 * comparison as RFC 9110 §13.1.2 says.
 */
import { parseList } from "structured-headers";
import { describe, expect, it } from "vitest";
import { createWindows, trafficSettings } from "ident-resolver/traffic";
import { etagOf, notModified, rateLimitHeaders } from "./api-headers";

/** A parsed list as [name, { params }] pairs. */
const items = (value: string) => parseList(value).map(([name, params]) => [name, Object.fromEntries(params)]);

describe("RateLimit and RateLimit-Policy (draft 11)", () => {
  it("name the cold-lookup, search and reads policies, what is left, and when room comes back", async () => {
    let t = 1_000_000;
    const settings = trafficSettings();
    const windows = createWindows(settings, null, () => t);
    const fresh = await rateLimitHeaders(windows, "203.0.113.9");
    expect(items(fresh["RateLimit-Policy"] ?? "")).toEqual([
      ["cold", { q: settings.coldLookups, w: 60 }],
      ["search", { q: settings.searches, w: 60 }],
      ["reads", { q: settings.storeReads, w: 60 }],
    ]);
    expect(items(fresh.RateLimit ?? "")).toEqual([
      ["cold", { r: settings.coldLookups, t: 0 }],
      ["search", { r: settings.searches, t: 0 }],
      ["reads", { r: settings.storeReads, t: 0 }],
    ]);
    await windows.coldLookups.take("203.0.113.9");
    t += 15_000;
    await windows.searches.take("203.0.113.9");
    await windows.searches.take("203.0.113.9");
    await windows.storeReads.take("203.0.113.9");
    const after = await rateLimitHeaders(windows, "203.0.113.9");
    expect(items(after.RateLimit ?? "")).toEqual([
      ["cold", { r: settings.coldLookups - 1, t: 45 }],
      ["search", { r: settings.searches - 2, t: 60 }],
      ["reads", { r: settings.storeReads - 1, t: 60 }],
    ]);
    // Another client's limits are its own.
    expect(items((await rateLimitHeaders(windows, "198.51.100.7")).RateLimit ?? "")[0]).toEqual([
      "cold",
      { r: settings.coldLookups, t: 0 },
    ]);
  });
});

describe("ETag and If-None-Match", () => {
  const tag = etagOf('{"a":1}');
  it("is strong, quoted, and the same for the same bytes", () => {
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(etagOf(Buffer.from('{"a":1}'))).toBe(tag);
    expect(etagOf('{"a":2}')).not.toBe(tag);
  });
  it.each([
    [tag, true],
    [`W/${tag}`, true],
    [`"other", ${tag}`, true],
    ["*", true],
    ['"other"', false],
    ["", false],
    [tag.slice(1, -1), false],
  ])("If-None-Match: %s → %s", (header, match) => expect(notModified(header, tag)).toBe(match));
  it("no header is never a match", () => expect(notModified(null, tag)).toBe(false));
});
