/**
 * What happened to a connection, in plain words (docs/decisions.md#reasons): a library's message such
 * as "Client network socket disconnected before secure TLS connection was established" is kept only
 * as the detail, never as the explanation.
 */

/** Error codes along an error's `cause` chain, outermost first. */
function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  for (let e: unknown = err, depth = 0; typeof e === "object" && e !== null && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  return codes;
}

/** The library's own words, joined along the cause chain: the detail. */
export function rawMessage(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; depth++, e = e.cause) {
    if (e.message && !parts.includes(e.message)) parts.push(e.message);
  }
  return parts.join(": ") || "connection failed";
}

const CERT_UNTRUSTED = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_REJECTED",
]);

/** What happened, for `host`, in words a publisher can act on. */
export function failureMessage(err: unknown, host: string): string {
  const codes = codesOf(err);
  const has = (...c: string[]) => codes.some((code) => c.includes(code));
  const raw = rawMessage(err);
  if (has("ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_NODATA")) return `the name ${host} does not resolve to an address (DNS)`;
  if (has("ECONNREFUSED")) return `the connection to ${host} was refused: nothing answers on port 443`;
  if (has("ERR_TLS_CERT_ALTNAME_INVALID")) return `the TLS certificate of ${host} is for another name`;
  if (has("CERT_HAS_EXPIRED")) return `the TLS certificate of ${host} has expired`;
  if (has("CERT_NOT_YET_VALID")) return `the TLS certificate of ${host} is not valid yet`;
  if (codes.some((c) => CERT_UNTRUSTED.has(c))) return `the TLS certificate of ${host} is not signed by an authority this resolver trusts`;
  if (has("EHOSTUNREACH", "ENETUNREACH")) return `there is no route to ${host}`;
  if (codes.some((c) => c.startsWith("ERR_SSL_") || c === "EPROTO") || /before secure TLS connection|SSL routines|handshake/i.test(raw)) {
    return `the TLS handshake with ${host} failed: the connection closed before a secure connection was set up`;
  }
  if (has("ECONNRESET", "UND_ERR_SOCKET", "EPIPE")) return `${host} closed the connection before the answer was complete`;
  return `the connection to ${host} failed`;
}
