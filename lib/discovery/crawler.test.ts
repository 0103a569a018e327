import { describe, expect, it } from "vitest";
import { answered } from "../../test/helpers/answered.ts";
import { foundJson } from "../../test/helpers/outcomes.ts";
import type { FetchOutcome } from "../fetch/outcome.ts";
import { createResolverCore } from "../resolver/index.ts";
import { refusal, type FetchRefusal } from "../traffic/refusal.ts";
import { reverify } from "./crawler.ts";

const doc = (url: string, body: unknown): FetchOutcome => foundJson(url, JSON.stringify(body));

describe("reverify: one background re-verification (docs/decisions.md#discovery)", () => {
  it("answers the result when every document was fetched again, and the refusal when a known document stood in for one", async () => {
    let spent: FetchRefusal | null = null;
    const fetch = async (url: string): Promise<FetchOutcome | FetchRefusal> => spent ?? doc(url, { network_id: "§:entity:alice.example" });
    let t = 0;
    const resolver = createResolverCore({ fetch, now: () => t });
    answered(await resolver.resolveEntity("alice.example"));
    t += 2 * 3600_000; // past the fresh hour: re-verification fetches again
    expect(answered(await reverify(resolver, "alice.example")).entity.status).toBe("accepted");
    t += 2 * 3600_000;
    spent = refusal("host_budget", "alice.example has had its requests", 40);
    // Answered as last fetched: not re-verified, so the job is tried again soon.
    expect(await reverify(resolver, "alice.example")).toMatchObject({ refused: "host_budget", retryAfterS: 40 });
  });
});
