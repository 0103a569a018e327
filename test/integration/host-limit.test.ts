/** docs/decisions.md#budget: at most 6 fetches to one host at a time, seen by the publisher itself. */
import { answered } from "../helpers/answered";
import { describe, expect, it } from "vitest";
import { useSampleNetwork } from "../helpers/sample";

const S = "\u00a7";
const credentials = Array.from({ length: 15 }, (_, i) => ({ id: `@u${i}@busy-issuer.test` }));
const files: Record<string, string> = {};
const routes: Record<string, { delay_ms: number }> = {};
for (let i = 0; i < 15; i++) {
  files[`/u${i}/ident-credential.json`] = JSON.stringify({
    ident_entity_id: `${S}:entity:many-creds.test`,
    ident_credential: { title: `T${i}` },
  });
  routes[`/u${i}/ident-credential.json`] = { delay_ms: 150 };
}

const ctx = useSampleNetwork({
  extraSites: {
    "many-creds.test": { files: { "/ident.json": JSON.stringify({ network_id: `${S}:entity:many-creds.test`, credentials }) } },
    "busy-issuer.test": { files, routes },
  },
});

describe("per-host limit, end to end", () => {
  it("15 credentials at one issuer: all verify, never more than 6 requests to it at once", async () => {
    ctx.net.resetCounts();
    const r = answered(await ctx.resolver().resolveEntity("many-creds.test"));
    expect(r.credentials.filter((c) => c.verified)).toHaveLength(15);
    expect(ctx.net.peakInFlight.get("busy-issuer.test")).toBe(6);
  });
});
