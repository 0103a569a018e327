import { describe, expect, it } from "vitest";
import { answerRefusal } from "./answer.ts";
import { FETCH_REFUSALS, isRefusal, refusal, REFUSAL_KINDS } from "./refusal.ts";

describe("refusals are values (docs/architecture.md#traffic)", () => {
  it("a refusal is told from an answer by its `refused` field alone", () => {
    expect(isRefusal(refusal("busy", "busy", 2))).toBe(true);
    expect(isRefusal({ ok: false, status: "not_found" })).toBe(false);
    expect(isRefusal(null)).toBe(false);
  });
  it("a fetch's refusals are among every refusal", () => {
    for (const kind of FETCH_REFUSALS) expect(REFUSAL_KINDS).toContain(kind);
  });
  it.each(REFUSAL_KINDS)("%s: one answer, 429 or 503 with Retry-After, no-store, the JSON body and words", (kind) => {
    const answer = answerRefusal(refusal(kind, "something was spent; try again in 7 s", 7));
    expect([429, 503]).toContain(answer.status);
    expect(answer.headers).toEqual({ "Retry-After": "7", "Cache-Control": "no-store" });
    expect(answer.body.error).toEqual({
      code: answer.status === 429 ? "rate_limited" : "busy",
      message: "Something was spent; try again in 7 s.",
      refused: kind,
      retry_after_s: 7,
    });
    expect(answer.heading.length).toBeGreaterThan(0);
  });
  it("a refusal that starts with a host name keeps it as it is", () => {
    expect(answerRefusal(refusal("host_budget", "gamma.example has had its requests", 5)).message).toBe(
      "gamma.example has had its requests.",
    );
  });
  it("Retry-After is at least a second, even for a refusal that may be asked again at once", () => {
    expect(answerRefusal(refusal("query_budget", "x", 0)).headers["Retry-After"]).toBe("1");
  });
});
