import { describe, expect, it } from "vitest";
import { clientKey } from "./client.ts";

describe("clientKey: the rightmost trusted hop", () => {
  it.each([
    ["203.0.113.9", 0, "203.0.113.9"],
    ["1.1.1.1, 203.0.113.9", 0, "203.0.113.9"],
    ["spoofed, 198.51.100.7, 10.0.0.2", 1, "198.51.100.7"],
    ["spoofed, 198.51.100.7", 0, "198.51.100.7"],
    ["", 0, "unknown"],
    [null, 0, "unknown"],
  ] as const)("%j with %d trusted hops → %s", (xff, hops, expected) => {
    expect(clientKey(xff, hops)).toBe(expected);
  });
  it("a client cannot choose its key by writing X-Forwarded-For", () => {
    expect(clientKey("victim, 203.0.113.9", 0)).toBe("203.0.113.9");
  });
});

describe("an IPv6 client is its /64 (docs/architecture.md#traffic)", () => {
  it.each([
    ["2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["2001:DB8:0001:0002:0:0:0:ffff", "2001:db8:1:2::/64"],
    ["2001:db8::", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["::ffff:203.0.113.9", "203.0.113.9"],
    ["[2001:db8:1:2::5]:443", "2001:db8:1:2::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["203.0.113.9", "203.0.113.9"],
  ] as const)("%s → %s", (address, group) => {
    expect(clientKey(address, 0)).toBe(group);
  });
  it("every address of one /64 is one client; the next /64 another", () => {
    const keys = new Set(Array.from({ length: 50 }, (_, i) => clientKey(`2001:db8:5:6:${i.toString(16)}::${i + 1}`, 0)));
    expect([...keys]).toEqual(["2001:db8:5:6::/64"]);
    expect(clientKey("2001:db8:5:7::1", 0)).not.toBe("2001:db8:5:6::/64");
  });
});
