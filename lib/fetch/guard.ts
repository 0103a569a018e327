import ipaddr from "ipaddr.js";
import type { LookupAddress } from "node:dns";

/**
 * The address guard (docs/decisions.md#address-guard [bind]): an address is allowed only when it is public unicast.
 * IPv4-mapped, IPv4-translated, 6to4, Teredo and NAT64 forms are judged by the IPv4 address they carry.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return parsed.range() === "unicast";
  const v6 = parsed as ipaddr.IPv6;
  // RFC 8215's local-use NAT64 prefix translates into a network of the operator's choosing, and its
  // IPv4 address may sit anywhere after the /48: never public (docs/decisions.md#address-guard).
  if (v6.match(LOCAL_USE_NAT64, 48)) return false;
  const embedded = embeddedIPv4(v6);
  if (embedded !== undefined) return embedded.every((v4) => v4.range() === "unicast");
  // Only global unicast 2000::/3 that ipaddr.js does not place in a special range.
  return v6.range() === "unicast" && ((v6.parts[0] ?? 0) & 0xe000) === 0x2000;
}

const LOCAL_USE_NAT64 = ipaddr.IPv6.parse("64:ff9b:1::");

/** The IPv4 addresses inside a tunnelling or translation form, or undefined when it is none. */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const p = (i: number) => v6.parts[i] ?? 0;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  switch (v6.range()) {
    case "ipv4Mapped": // ::ffff:a.b.c.d
    case "rfc6145": // ::ffff:0:a.b.c.d
    case "rfc6052": // 64:ff9b::a.b.c.d (NAT64); the local-use 64:ff9b:1::/48 is refused above
      return [v4(p(6), p(7))];
    case "6to4": // 2002:AABB:CCDD::
      return [v4(p(1), p(2))];
    case "teredo": // 2001:0:SERVER:flags:port:~CLIENT
      return [v4(p(2), p(3)), v4(~p(6) & 0xffff, ~p(7) & 0xffff)];
    default:
      return undefined;
  }
}

/** The error a guarded lookup fails with; the fetcher maps it to the outcome `blocked`. */
export class BlockedAddressError extends Error {
  readonly code = "IDENT_BLOCKED";
  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    super(`${hostname} resolves to ${address}, which is not a public address`);
    this.name = "BlockedAddressError";
  }
}

/** Node's `dns.lookup` signature as `net.connect({ lookup })` calls it. */
export type LookupFunction = (
  hostname: string,
  options: { all: true; family?: number },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** A plain resolver: answers every address of a host name. */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

/** The system's resolver, every address in its order; `node:dns` is loaded by the first lookup, not with the package (docs/library.md#figures). */
export const lookupAll: Resolve = async (hostname) => (await import("node:dns")).promises.lookup(hostname, { all: true, verbatim: true });

/**
 * Resolves a host name and checks every address it answers (docs/decisions.md#address-guard [bind]):
 * the checked addresses, or a {@link BlockedAddressError}, or an `ENOTFOUND` error for no address.
 */
export function checkedResolve(resolve: Resolve, isAllowed: (address: string) => boolean = isPublicAddress) {
  return async function resolveChecked(hostname: string): Promise<LookupAddress[]> {
    const addresses = await resolve(hostname);
    if (addresses.length === 0) throw Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" });
    const bad = addresses.find((a) => !isAllowed(a.address));
    if (bad) throw new BlockedAddressError(hostname, bad.address);
    return addresses.map((a) => ({ address: a.address, family: a.family }));
  };
}

/**
 * Wraps a resolver into a `lookup` for `net.connect` that checks every answered address and hands
 * the connection exactly the addresses it checked, so a second DNS answer cannot redirect it
 * (docs/decisions.md#address-guard [bind]). One resolution per connection.
 *
 * @param isAllowed the policy; {@link isPublicAddress} except in tests that must stay on loopback.
 */
export function guardedLookup(resolve: Resolve, isAllowed: (address: string) => boolean = isPublicAddress) {
  const resolveChecked = checkedResolve(resolve, isAllowed);
  return function lookup(hostname: string, options: unknown, callback: unknown): void {
    const cb = (typeof options === "function" ? options : callback) as (
      err: Error | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void;
    const wantsAll = typeof options === "object" && options !== null && (options as { all?: boolean }).all === true;
    resolveChecked(hostname).then(
      (checked) => {
        const [first] = checked;
        if (wantsAll || !first) cb(null, checked);
        else cb(null, first.address, first.family);
      },
      (err: Error) => cb(err, []),
    );
  };
}
