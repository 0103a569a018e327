import { describe, expect, it } from "vitest";
import { failureMessage, rawMessage } from "./failure-message.ts";

/** An error as undici and node:tls shape them: a code, often on the cause. */
const failure = (message: string, code?: string, cause?: unknown) =>
  Object.assign(new Error(message, cause === undefined ? undefined : { cause }), code ? { code } : {});

describe("network failures in words (docs/decisions.md#reasons)", () => {
  const cases: [string, unknown, string][] = [
    [
      "DNS",
      failure("fetch failed", undefined, failure("getaddrinfo ENOTFOUND x.example", "ENOTFOUND")),
      "the name x.example does not resolve",
    ],
    ["refused", failure("connect ECONNREFUSED 192.0.2.1:443", "ECONNREFUSED"), "was refused"],
    ["another name", failure("Hostname/IP does not match certificate's altnames", "ERR_TLS_CERT_ALTNAME_INVALID"), "is for another name"],
    ["expired", failure("certificate has expired", "CERT_HAS_EXPIRED"), "has expired"],
    ["self-signed", failure("self-signed certificate", "DEPTH_ZERO_SELF_SIGNED_CERT"), "not signed by an authority"],
    [
      "handshake",
      failure("Client network socket disconnected before secure TLS connection was established", "ECONNRESET"),
      "the TLS handshake with x.example failed",
    ],
    ["reset", failure("other side closed", "UND_ERR_SOCKET"), "closed the connection before the answer was complete"],
    ["unknown", new Error("something odd"), "the connection to x.example failed"],
  ];
  it.each(cases)("%s: says what happened, without the library's message", (_, err, words) => {
    const said = failureMessage(err, "x.example");
    expect(said).toContain(words);
    expect(said).not.toContain(rawMessage(err));
  });
  it("keeps the library's message, joined along the cause chain, for the detail", () => {
    expect(rawMessage(failure("fetch failed", undefined, failure("getaddrinfo ENOTFOUND x.example")))).toBe(
      "fetch failed: getaddrinfo ENOTFOUND x.example",
    );
  });
});
