import { describe, expect, it } from "vitest";
import { matchConnectTo, parseConnectTo } from "./connect-to.ts";

describe("IDENT_CONNECT_TO (docs/decisions.md#connect-to, curl --connect-to)", () => {
  it("parses entries, brackets and empty fields", () => {
    const parsed = parseConnectTo("alice.example:443:127.0.0.1:8443, ::[::1]:9443,blog.example::: ");
    expect(parsed).toEqual({
      ok: true,
      entries: [
        { host: "alice.example", port: 443, connectHost: "127.0.0.1", connectPort: 8443 },
        { host: "", port: null, connectHost: "::1", connectPort: 9443 },
        { host: "blog.example", port: null, connectHost: "", connectPort: null },
      ],
    });
  });
  it.each(["alice.example:443:127.0.0.1", "a:b:c:d", "a:443:b:70000", "a:0:b:1", "::1:443:x:1"])("rejects %j", (value) => {
    expect(parseConnectTo(value).ok).toBe(false);
  });
  it("matches the first entry whose host and port fit; empty matches any", () => {
    const parsed = parseConnectTo("alice.example:443:127.0.0.2:1,:8443:127.0.0.3:2,::127.0.0.4:");
    if (!parsed.ok) throw new Error(parsed.message);
    expect(matchConnectTo(parsed.entries, "ALICE.example", 443)).toEqual({ host: "127.0.0.2", port: 1 });
    expect(matchConnectTo(parsed.entries, "alice.example", 8443)).toEqual({ host: "127.0.0.3", port: 2 });
    expect(matchConnectTo(parsed.entries, "bob.example", 443)).toEqual({ host: "127.0.0.4", port: 443 });
    const portOnly = parseConnectTo("::127.0.0.1:1,x.example:443::8443");
    if (!portOnly.ok) throw new Error(portOnly.message);
    expect(matchConnectTo(portOnly.entries.slice(1), "x.example", 443)).toEqual({ host: null, port: 8443 });
    expect(matchConnectTo([], "bob.example", 443)).toBeNull();
  });
});
