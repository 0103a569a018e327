/**
 * Every refusal, and the index failing, in the form of the route's answers (web/refusal-answer.ts,
 * docs/architecture.md#routes "answer"): one writer, for pages, the API, feeds, sitemaps and badges.
 */
import { describe, expect, it } from "vitest";
import { refusal } from "ident-resolver/traffic";
import { refusalAnswer, unavailableAnswer } from "./refusal-answer";
import { PROFILES, type Profile } from "./routes";

const profiles = Object.keys(PROFILES) as Profile[];

describe("the index failing (unavailableAnswer)", () => {
  it.each(profiles)("%s: 503 with Retry-After, no-store and the route's CORS, in its form; no client's RateLimit", (profile) => {
    for (const [why, retry] of [
      ["no index", "60"],
      ["unreadable", "5"],
    ] as const) {
      const answer = unavailableAnswer(profile, why);
      expect(answer.status).toBe(503);
      expect(answer.headers["Retry-After"]).toBe(retry);
      expect(answer.headers["Cache-Control"]).toBe("no-store");
      expect(answer.headers["RateLimit"]).toBeUndefined();
      expect(answer.headers["Access-Control-Allow-Origin"]).toBe(PROFILES[profile].cors ? "*" : undefined);
      const form = PROFILES[profile].answers;
      if (form === "json")
        expect(JSON.parse(answer.body)).toEqual({ error: { code: "unavailable", message: expect.stringMatching(/index/) } });
      if (form === "svg") expect(answer.body).toMatch(/^<svg[^>]* aria-label="ident: index unavailable"/);
      if (form === "html") expect(answer.body).toMatch(/<h1>Index unavailable<\/h1><p>The index .*\.<\/p>/);
    }
  });

  it("says what the route says, when it says more", () => {
    const answer = unavailableAnswer("api", "no index", "The index is not available on this server; lookups are answered without it.");
    expect(JSON.parse(answer.body).error.message).toBe("The index is not available on this server; lookups are answered without it.");
  });

  it("is written as a refusal is: the same headers but the refusal's own, the same form", () => {
    const refused = refusalAnswer("feed", refusal("searches", "too many searches", 30), { RateLimit: '"search";r=0;t=30' });
    const failed = unavailableAnswer("feed", "unreadable");
    expect(Object.keys(failed.headers).sort()).toEqual(
      Object.keys(refused.headers)
        .filter((h) => h !== "RateLimit")
        .sort(),
    );
    expect(failed.headers["Content-Type"]).toBe(refused.headers["Content-Type"]);
  });
});
