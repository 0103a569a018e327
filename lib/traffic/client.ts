import { isIPv4, isIPv6 } from "node:net";

/**
 * The client address for rate limiting: the rightmost `X-Forwarded-For` entry that a trusted hop
 * added, never one the client wrote. With `trustedHops` proxies in front of the app, the client is
 * that many entries from the right; entries further left are the client's own claims. An IPv6
 * client is its /64 (docs/architecture.md#traffic).
 */
export function clientKey(forwardedFor: string | null, trustedHops: number, fallback = "unknown"): string {
  const hops = (forwardedFor ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  const hop = hops[hops.length - 1 - trustedHops] ?? hops[0];
  return hop === undefined ? fallback : addressGroup(hop);
}

/**
 * The addresses one client is counted as: an IPv4 address alone (an IPv4-mapped IPv6 address as that
 * IPv4 address), an IPv6 address with the rest of its /64, which one subscriber is usually given
 * whole: counted by its full address, one host could be a new client for every request.
 */
export function addressGroup(address: string): string {
  const bare = address.replace(/^\[(.*)\](?::\d+)?$/, "$1").replace(/%.*$/, "");
  if (!isIPv6(bare)) return address;
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1];
  if (mapped && isIPv4(mapped)) return mapped;
  const [head = "", tail] = bare.split("::");
  const part = (side: string) => (side === "" ? [] : side.split(":"));
  const left = part(head);
  // An embedded IPv4 tail is two groups; only the first four groups are kept, so it only counts them.
  const right = tail === undefined ? [] : part(tail).flatMap((g) => (g.includes(".") ? ["0", "0"] : [g]));
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}
