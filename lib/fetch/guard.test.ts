import type { LookupAddress } from "node:dns";
import { describe, expect, it, vi } from "vitest";
import { BlockedAddressError, guardedLookup, isPublicAddress } from "./guard.ts";

describe("isPublicAddress (docs/decisions.md#address-guard [bind])", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.1.2.3", "private 10/8"],
    ["172.16.0.1", "private 172.16/12"],
    ["172.31.255.255", "private 172.16/12"],
    ["192.168.1.1", "private 192.168/16"],
    ["100.64.0.1", "shared CGNAT 100.64/10"],
    ["169.254.169.254", "link-local (cloud metadata)"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "0/8"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.1", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["::1", "IPv6 loopback"],
    ["::", "IPv6 unspecified"],
    ["fc00::1", "unique local fc00::/7"],
    ["fd12:3456::1", "unique local fc00::/7"],
    ["fe80::1", "link-local fe80::/10"],
    ["ff02::1", "IPv6 multicast"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped loopback, hex form"],
    ["::ffff:10.0.0.1", "IPv4-mapped private"],
    ["::ffff:0:127.0.0.1", "IPv4-translated loopback"],
    ["2002:7f00:1::1", "6to4 wrapping 127.0.0.1"],
    ["2002:a00:1::", "6to4 wrapping 10.0.0.1"],
    ["64:ff9b::7f00:1", "NAT64 wrapping 127.0.0.1"],
    ["64:ff9b::a9fe:a9fe", "NAT64 wrapping 169.254.169.254"],
    ["64:ff9b:1::a00:1", "local-use NAT64 wrapping 10.0.0.1"],
    ["64:ff9b:1:a00:0:100:808:808", "local-use NAT64 with 10.0.0.1 after the /48 and 8.8.8.8 in the last 32 bits (RFC 8215)"],
    ["64:ff9b:1::808:808", "local-use NAT64 wrapping a public address: still local-use (RFC 8215)"],
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo with client 127.0.0.1"],
    ["2001:db8::1", "documentation 2001:db8::/32"],
    ["::7f00:1", "IPv4-compatible loopback (outside 2000::/3)"],
    ["100::1", "discard-only 100::/64"],
    ["not an address", "garbage"],
  ])("blocks %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
  it.each([["93.184.215.14"], ["8.8.8.8"], ["2606:4700::1111"], ["::ffff:8.8.8.8"], ["2002:808:808::1"], ["64:ff9b::808:808"]])(
    "allows public unicast %s",
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});

function lookupOnce(resolve: (host: string) => Promise<LookupAddress[]>, isAllowed?: (a: string) => boolean) {
  const lookup = guardedLookup(resolve, isAllowed);
  return new Promise<{ err: Error | null; addresses: unknown }>((done) =>
    lookup("victim.example", { all: true }, (err: Error | null, addresses: unknown) => done({ err, addresses })),
  );
}

describe("guardedLookup", () => {
  it("refuses a mixed public + private answer", async () => {
    const { err } = await lookupOnce(async () => [
      { address: "93.184.215.14", family: 4 },
      { address: "10.0.0.5", family: 4 },
    ]);
    expect(err).toBeInstanceOf(BlockedAddressError);
    expect((err as BlockedAddressError).address).toBe("10.0.0.5");
  });
  it("hands the connection exactly the addresses it checked, resolving once", async () => {
    const resolve = vi.fn(async () => [{ address: "93.184.215.14", family: 4 }]);
    const { err, addresses } = await lookupOnce(resolve);
    expect(err).toBeNull();
    expect(addresses).toEqual([{ address: "93.184.215.14", family: 4 }]);
    expect(resolve).toHaveBeenCalledTimes(1);
  });
  it("answers the single-address form too", async () => {
    const lookup = guardedLookup(async () => [{ address: "2606:4700::1111", family: 6 }]);
    const got = await new Promise((done) => lookup("x.example", {}, (_e: unknown, a: unknown, f: unknown) => done([a, f])));
    expect(got).toEqual(["2606:4700::1111", 6]);
  });
  it("fails on an empty answer", async () => {
    const { err } = await lookupOnce(async () => []);
    expect(err?.message).toMatch(/no address/);
  });
});
