/**
 * The guarded fetcher over `node:https` (docs/library.md#runtimes), the one the package uses on Bun
 * and Deno, tried as test/integration/fetcher-attacks.test.ts tries undici's: private addresses in
 * DNS answers, redirects out of bounds, bodies too large or too slow. Blocked answers fail before
 * any connection is made; everything else stays on loopback. test/package/package.test.ts runs it
 * on Bun and Deno themselves.
 */
import type { LookupAddress } from "node:dns";
import { describe, expect, it, vi } from "vitest";
import { createPortableFetcher, createResolver, parseConnectTo, type PortableFetcherOptions } from "ident-resolver/node";
import { REDIRECTS_OUT_OF_BOUNDS } from "../helpers/redirect-attacks";
import { useSampleNetwork } from "../helpers/sample";

const ctx = useSampleNetwork();
const answer =
  (...addresses: string[]) =>
  async (): Promise<LookupAddress[]> =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

/** The portable fetcher on the sample network (its CA trusted, every host sent to it), or routed by `resolve` alone. */
function portable(options: PortableFetcherOptions & { routed?: boolean } = {}) {
  const parsed = parseConnectTo(ctx.net.connectTo);
  if (!parsed.ok) throw new Error(parsed.message);
  const { routed = true, ...rest } = options;
  return createPortableFetcher({ ca: [ctx.net.caPem], userAgent: "ident-resolver/test", connectTo: routed ? parsed.entries : [], ...rest });
}

describe("the portable fetcher: the address guard holds", () => {
  it.each(["127.0.0.1", "10.0.0.1", "169.254.169.254", "::1", "fc00::5", "::ffff:127.0.0.1", "64:ff9b::a00:1"])(
    "a lookup answering %s → blocked, nothing requested",
    async (address) => {
      const resolve = vi.fn(answer(address));
      ctx.net.resetCounts();
      const out = await portable({ routed: false, resolve })("https://alice.example/ident.json", "json");
      expect(out).toMatchObject({
        ok: false,
        status: "blocked",
        message: expect.stringContaining(`resolves to ${address}, which is not a public address`),
      });
      expect(resolve).toHaveBeenCalledWith("alice.example");
      expect(ctx.net.requests.size).toBe(0);
    },
  );
  it("a mixed allowed + private answer → blocked", async () => {
    const out = await portable({ routed: false, resolve: answer("127.0.0.2", "10.0.0.1"), isAllowed: (a) => a === "127.0.0.2" })(
      "https://alice.example/ident.json",
      "json",
    );
    expect(out).toMatchObject({ ok: false, status: "blocked" });
  });
  it("the name is resolved by the guard and the address it checked is the one dialled", async () => {
    // An entry that changes only the port: the name is still resolved, by the guard's lookup. The
    // policy allows 127.0.0.1 for this test alone, so the sample network answers.
    const resolve = vi.fn(answer("127.0.0.1"));
    const fetch = portable({
      connectTo: [{ host: "", port: null, connectHost: "", connectPort: ctx.net.port }],
      resolve,
      isAllowed: (a) => a === "127.0.0.1",
    });
    expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ ok: true, status: "found" });
    expect(resolve).toHaveBeenCalledWith("alice.example");
  });
  it("an IP literal, http:, another port and user-info are refused before any lookup", async () => {
    const resolve = vi.fn(answer("127.0.0.1"));
    const fetch = portable({ routed: false, resolve });
    for (const url of [
      "https://127.0.0.1/ident.json",
      "https://[::1]/x",
      "http://alice.example/x",
      "https://alice.example:8443/x",
      "https://u:p@alice.example/x",
    ]) {
      expect(await fetch(url, "json"), url).toMatchObject({ status: "blocked" });
    }
    expect(resolve).not.toHaveBeenCalled();
  });
});

describe("the portable fetcher: the protocol's fetching rules (docs/decisions.md#fetching)", () => {
  it("finds a document through IDENT_CONNECT_TO, as undici's fetcher does", async () => {
    const out = await portable()("https://alice.example/ident.json", "json");
    expect(out).toMatchObject({ ok: true, status: "found", httpStatus: 200, finalUrl: "https://alice.example/ident.json" });
    expect(ctx.net.log.at(-1)?.headers).toMatchObject({ "user-agent": "ident-resolver/test", "accept-encoding": "gzip, deflate" });
  });
  it.each(REDIRECTS_OUT_OF_BOUNDS)("%s (%s) → blocked", async (domain) => {
    expect(await portable()(`https://${domain}/ident.json`, "json")).toMatchObject({ ok: false, status: "blocked" });
  });
  it("3 hops → found at the last hop", async () => {
    expect(await portable()("https://redirect-ok.test/ident.json", "json")).toMatchObject({
      ok: true,
      finalUrl: "https://redirect-ok.test/final.json",
    });
  });
  it.each(["huge.test", "huge-chunked.test", "gzip-bomb.test"])("%s → too_large, counted after decompression", async (domain) => {
    expect(await portable()(`https://${domain}/ident.json`, "json")).toMatchObject({ ok: false, status: "too_large" });
  });
  it("a gzip body within the cap is decoded", async () => {
    expect(await portable()("https://gzip-ok.test/ident.json", "json")).toMatchObject({ ok: true, status: "found" });
  });
  it("refuses a brotli body unread", async () => {
    expect(await portable()("https://brotli-bomb.test/ident.json", "json")).toMatchObject({
      status: "unreachable",
      message: "unsupported Content-Encoding br",
    });
  });
  it("a body that drips, and headers that never come → timeout at the one deadline", async () => {
    expect(await portable({ timeoutMs: 1500 })("https://drip.test/ident.json", "json")).toMatchObject({
      status: "timeout",
      httpStatus: 200,
    });
    expect(await portable({ timeoutMs: 500 })("https://slow.test/ident.json", "json")).toMatchObject({ status: "timeout" });
  });
  it("a gzip body that stalls after a few bytes → timeout at the deadline, never a hang", async () => {
    ctx.net.change("gzip-ok.test", { routes: { "/ident.json": { gzip: true, drip_ms: 1000 } } });
    try {
      expect(await portable({ timeoutMs: 1500 })("https://gzip-ok.test/ident.json", "json")).toMatchObject({
        status: "timeout",
        httpStatus: 200,
      });
    } finally {
      ctx.net.change("gzip-ok.test", null);
    }
  });
  it("a name that does not resolve → unreachable, said in words", async () => {
    const resolve = async (): Promise<LookupAddress[]> => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
    };
    expect(await portable({ routed: false, resolve })("https://alice.example/ident.json", "json")).toMatchObject({
      status: "unreachable",
      message: "the name alice.example does not resolve to an address (DNS)",
    });
  });
});

describe("createResolver from ident-resolver/node", () => {
  it("reads IDENT_CONNECT_TO from the variables it is given, and refuses a bad one in words", async () => {
    const resolver = createResolver({ env: { IDENT_CONNECT_TO: ctx.net.connectTo }, ca: [ctx.net.caPem] });
    const record = await resolver.resolve("alice.example");
    expect("results" in record && record.results[0]?.entity.status).toBe("accepted");
    expect(() => createResolver({ env: { IDENT_FETCH_TIMEOUT_MS: "soon" } })).toThrow(/IDENT_FETCH_TIMEOUT_MS/);
    expect(() => createResolver({ env: {}, connectTo: "nonsense" })).toThrow(/connectTo/);
  });
});
