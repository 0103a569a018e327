/**
 * The client address for rate limiting: the rightmost `X-Forwarded-For` entry that a trusted hop
 * added, never one the client wrote. With `trustedHops` proxies in front of the app, the client is
 * that many entries from the right; entries further left are the client's own claims.
 */
export function clientKey(forwardedFor: string | null, trustedHops: number, fallback = "unknown"): string {
  const hops = (forwardedFor ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  return hops[hops.length - 1 - trustedHops] ?? hops[0] ?? fallback;
}
