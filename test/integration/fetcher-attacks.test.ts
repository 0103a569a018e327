/**
 * The guarded fetcher as an attacker would try it (docs/decisions.md#fetching): private addresses in DNS answers,
 * rebinding, redirects out of bounds, bodies too large or too slow. Traffic stays on loopback:
 * blocked answers fail before any connection is made.
 */
import type { LookupAddress } from "node:dns";
import { describe, expect, it, vi } from "vitest";
import { MiB } from "ident-resolver";
import { isPublicAddress } from "ident-resolver/node";
import { startSampleNetwork } from "../network/server";
import { REDIRECTS_OUT_OF_BOUNDS } from "../helpers/redirect-attacks";
import { useSampleNetwork } from "../helpers/sample";

const ctx = useSampleNetwork();
const answer =
  (...addresses: string[]) =>
  async (): Promise<LookupAddress[]> =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

/**
 * A tripwire around the real policy: the test records what the guard was asked and what the policy
 * said, but lets nothing off loopback through, so even a broken guard cannot send a packet elsewhere.
 */
function tripwire() {
  const asked: [string, boolean][] = [];
  const isAllowed = (address: string) => {
    const verdict = isPublicAddress(address);
    asked.push([address, verdict]);
    return verdict && (address.startsWith("127.") || address === "::1");
  };
  return { asked, isAllowed };
}

describe("address guard: a lookup answering each blocked range", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["10.0.0.1", "10/8"],
    ["172.16.5.4", "172.16/12"],
    ["192.168.0.1", "192.168/16"],
    ["100.64.1.1", "100.64/10"],
    ["169.254.169.254", "169.254/16"],
    ["0.0.0.0", "0/8"],
    ["224.0.0.251", "multicast"],
    ["::1", "::1"],
    ["fc00::5", "fc00::/7"],
    ["fe80::1", "fe80::/10"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped loopback, hex"],
    ["2002:7f00:1::", "6to4 of 127.0.0.1"],
    ["64:ff9b::a00:1", "NAT64 of 10.0.0.1"],
    ["64:ff9b:1:a00:0:100:808:808", "local-use NAT64 (RFC 8215), 10.0.0.1 after the /48"],
  ])("%s (%s) → the policy refuses it, the fetch ends blocked, nothing is requested", async (address) => {
    const wire = tripwire();
    const resolve = vi.fn(answer(address));
    const fetch = ctx.fetcher({ connectTo: false, resolve, isAllowed: wire.isAllowed });
    ctx.net.resetCounts();
    const out = await fetch("https://alice.example/ident.json", "json");
    expect(out).toMatchObject({ ok: false, status: "blocked" });
    expect(wire.asked).toEqual([[address, false]]);
    expect(resolve).toHaveBeenCalledTimes(1);
    expect(ctx.net.requests.size).toBe(0);
  });
  it.each(["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"])("the default policy, end to end, blocks loopback %s", async (address) => {
    const fetch = ctx.fetcher({ connectTo: false, resolve: answer(address) });
    ctx.net.resetCounts();
    expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ ok: false, status: "blocked" });
    expect(ctx.net.requests.size).toBe(0);
  });
  it("a mixed allowed + private answer → blocked (127.0.0.2 stands in for the public address)", async () => {
    const fetch = ctx.fetcher({ connectTo: false, resolve: answer("127.0.0.2", "10.0.0.1"), isAllowed: (a) => a === "127.0.0.2" });
    expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ ok: false, status: "blocked" });
  });
  it("an IP-literal URL is refused before any lookup", async () => {
    const resolve = vi.fn(answer("127.0.0.1"));
    const fetch = ctx.fetcher({ connectTo: false, resolve });
    for (const url of ["https://127.0.0.1/ident.json", "https://[::1]/ident.json", "https://2130706433/ident.json", "https://0x7f.1/x"]) {
      expect(await fetch(url, "json")).toMatchObject({ status: "blocked" });
    }
    expect(resolve).not.toHaveBeenCalled();
  });
  it("http:, another port and user-info are refused", async () => {
    const fetch = ctx.fetcher();
    for (const url of [
      "http://alice.example/ident.json",
      "https://alice.example:8443/ident.json",
      "https://u:p@alice.example/ident.json",
      "file:///etc/passwd",
    ]) {
      expect(await fetch(url, "json")).toMatchObject({ status: "blocked" });
    }
  });
});

describe("DNS rebinding: the connection goes to the address that was checked", () => {
  it("a lookup answering 'allowed' then 'loopback' is asked once, and the checked address is the one dialled", async () => {
    // A second sample network on 127.0.0.2 stands in for a public host: the test policy allows only it.
    // The entry ":: :port" changes only the port, so the host name is still resolved and guarded.
    const standIn = await startSampleNetwork({ host: "127.0.0.2" });
    try {
      let calls = 0;
      const resolve = vi.fn(async (): Promise<LookupAddress[]> => [{ address: calls++ === 0 ? "127.0.0.2" : "127.0.0.1", family: 4 }]);
      const fetch = ctx.fetcher({
        connectTo: [{ host: "", port: null, connectHost: "", connectPort: standIn.port }],
        resolve,
        ca: [standIn.caPem],
        isAllowed: (a) => a === "127.0.0.2",
      });
      const first = await fetch("https://alice.example/ident.json", "json");
      expect(first).toMatchObject({ ok: true, status: "found" });
      expect(resolve).toHaveBeenCalledTimes(1);
      expect(standIn.requests.get("alice.example/ident.json")).toBe(1);
      // The rebinding answer (127.0.0.1) on a new connection is refused by the guard, never dialled.
      const second = await fetch("https://bob.example/ident.json", "json");
      expect(second).toMatchObject({ ok: false, status: "blocked" });
    } finally {
      await standIn.close();
    }
  });
});

describe("redirects (docs/decisions.md#fetching: at most 3 hops, each https on 443 and guarded again)", () => {
  it.each(REDIRECTS_OUT_OF_BOUNDS)("%s (%s) → blocked", async (domain) => {
    const out = await ctx.fetcher()(`https://${domain}/ident.json`, "json");
    expect(out).toMatchObject({ ok: false, status: "blocked" });
  });
  it("3 hops → found at the last hop", async () => {
    const out = await ctx.fetcher()("https://redirect-ok.test/ident.json", "json");
    expect(out).toMatchObject({ ok: true, finalUrl: "https://redirect-ok.test/final.json" });
  });
  it("a redirect to a host that resolves privately → blocked by the guard at connect time", async () => {
    const resolve = vi.fn(answer("10.0.0.7"));
    const wire = tripwire();
    const fetch = ctx.fetcher({
      connectTo: [{ host: "redirect-internal.test", port: null, connectHost: "127.0.0.1", connectPort: ctx.net.port }],
      resolve,
      isAllowed: wire.isAllowed,
    });
    const out = await fetch("https://redirect-internal.test/ident.json", "json");
    expect(out).toMatchObject({ ok: false, status: "blocked", finalUrl: "https://internal.test/ident.json" });
    expect(resolve).toHaveBeenCalledWith("internal.test");
    expect(wire.asked).toEqual([["10.0.0.7", false]]);
  });
});

describe("size caps (docs/decisions.md#fetching: 1 MiB JSON, 2 MiB HTML, decoded)", () => {
  it("a body over the cap with Content-Length → too_large", async () => {
    expect(await ctx.fetcher()("https://huge.test/ident.json", "json")).toMatchObject({ status: "too_large" });
  });
  it("a body over the cap without Content-Length → too_large while streaming", async () => {
    expect(await ctx.fetcher()("https://huge-chunked.test/ident.json", "json")).toMatchObject({ status: "too_large" });
  });
  it("asks only for the encodings it decodes with a bounded window, and refuses a brotli body unread", async () => {
    ctx.net.resetCounts();
    const out = await ctx.fetcher()("https://brotli-bomb.test/ident.json", "json");
    expect(out).toMatchObject({ ok: false, status: "unreachable", message: "unsupported Content-Encoding br" });
    expect(ctx.net.log.map((r) => r.headers["accept-encoding"])).toEqual(["gzip, deflate"]);
  });
  it("a gzip body that inflates past the cap → too_large", async () => {
    const out = await ctx.fetcher()("https://gzip-bomb.test/ident.json", "json");
    expect(out).toMatchObject({ status: "too_large" });
  });
  it("the HTML cap is separate and larger", async () => {
    const fetch = ctx.fetcher({ maxBytes: { json: 10, html: 3 * MiB } });
    expect(await fetch("https://alice.example/ident.json", "json")).toMatchObject({ status: "too_large" });
    expect(await fetch("https://huge.test/ident.json", "html")).toMatchObject({ status: "found" });
  });
});

describe("slow publishers (docs/decisions.md#fetching: one deadline for connect, headers and body)", () => {
  it("a body that drips one byte a second → timeout at the deadline", async () => {
    const out = await ctx.fetcher({ timeoutMs: 1500 })("https://drip.test/ident.json", "json");
    expect(out).toMatchObject({ ok: false, status: "timeout", httpStatus: 200 });
  });
  it("headers that never come → timeout", async () => {
    expect(await ctx.fetcher({ timeoutMs: 500 })("https://slow.test/ident.json", "json")).toMatchObject({ status: "timeout" });
  });
  it("a server that is not there → unreachable, said in words, the library's message only as the detail", async () => {
    const out = await ctx.fetcher()("https://no-such-host.test/ident.json", "json");
    expect(out).toMatchObject({ status: "unreachable" });
    if (!("ok" in out) || out.ok) throw new Error("fetched");
    expect(out.message).toBe(
      "the TLS handshake with no-such-host.test failed: the connection closed before a secure connection was set up",
    );
    expect(out.detail).toMatch(/socket disconnected/i);
  });
  it("a library's message of 40,000 characters (a certificate's names) → a detail kept at 2,000, as a problem keeps it", async () => {
    const resolve = async (): Promise<LookupAddress[]> => {
      throw Object.assign(new Error(`DNS:${"n".repeat(40_000)}`), { code: "ENOTFOUND" });
    };
    const out = await ctx.fetcher({ connectTo: false, resolve })("https://alice.example/ident.json", "json");
    if (!("ok" in out) || out.ok) throw new Error("fetched");
    expect(out).toMatchObject({ status: "unreachable", message: "the name alice.example does not resolve to an address (DNS)" });
    expect(out.detail).toBe(`DNS:${"n".repeat(1995)}…`);
  });
  it("a certificate from an untrusted CA → unreachable (TLS is verified), said in words", async () => {
    const fetch = ctx.fetcher({ ca: [] });
    const out = await fetch("https://alice.example/ident.json", "json");
    expect(out).toMatchObject({ ok: false, status: "unreachable" });
    if (!("ok" in out) || out.ok) throw new Error("fetched");
    expect(out.message).toBe("the TLS certificate of alice.example is not signed by an authority this resolver trusts");
    expect(out.detail).toBeDefined();
  });
});
