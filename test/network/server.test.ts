import { connect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSampleNetwork, type SampleNetwork } from "./server";

/** The names of the certificate `servername` is shown, checked as a client checks it (the CA, the name). */
function namesShown(net: SampleNetwork, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port: net.port, servername, ca: net.caPem }, () => {
      const names = socket.getPeerCertificate().subjectaltname ?? "";
      socket.end();
      resolve(names);
    });
    socket.on("error", reject);
  });
}

describe("the sample network's certificates", () => {
  let net: SampleNetwork;
  let open: SampleNetwork;
  beforeAll(async () => {
    net = await startSampleNetwork({ spread: false });
    open = await startSampleNetwork({ spread: false, anyHost: true, names: ["*.load.test"] });
  });
  afterAll(async () => {
    await Promise.all([net?.close(), open?.close()]);
  });

  it("each site shows a certificate naming it alone, as a publisher's does", async () => {
    expect(net.domains.length).toBeGreaterThan(10);
    for (const domain of ["alice.example", net.domains.at(-1) ?? ""]) {
      expect(await namesShown(net, domain)).toBe(`DNS:${domain}`);
    }
  });

  it("any other host it answers gets the certificate naming every site and the names asked for", async () => {
    const names = await namesShown(open, "someone.load.test");
    expect(names).toContain("DNS:*.load.test");
    expect(names).toContain("DNS:alice.example");
  });

  it("a host with no site has no server: its handshake fails", async () => {
    await expect(namesShown(net, "nobody.example")).rejects.toThrow();
  });
});
