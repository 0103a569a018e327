import { describe, expect, it } from "vitest";
import { NotFetched } from "./refusal";

describe("NotFetched", () => {
  it("is recognised across copies of its module (Next may bundle one per entry point), and nothing else is", () => {
    expect(new NotFetched("busy", "busy", 2)).toBeInstanceOf(NotFetched);
    // What another copy's constructor makes: the same brand, another class.
    const elsewhere = Object.assign(new Error("busy"), { [Symbol.for("ident-resolver.NotFetched")]: true, kind: "busy" });
    expect(elsewhere instanceof NotFetched).toBe(true);
    expect(new Error("busy") instanceof NotFetched).toBe(false);
    expect((null as unknown as object) instanceof NotFetched).toBe(false);
  });
});
