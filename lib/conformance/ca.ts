/**
 * The test CA of the conformance publishers and of the sample network (docs/library.md#conformance).
 * @peculiar/x509 and reflect-metadata are optional peers, loaded when a CA is made: importing this
 * module has no side effect and needs neither.
 */
import { randomBytes, webcrypto } from "node:crypto";

/**
 * A throw-away CA and one server certificate it signed for every name, made in memory; nothing is
 * committed. `certFor` signs one more, with the same key, for the names given alone.
 */
export type TestCa = { caPem: string; certPem: string; keyPem: string; certFor: (names: readonly string[]) => Promise<string> };

/** @peculiar/x509, loaded once, after the reflect-metadata it needs, on Node's WebCrypto. */
let loaded: Promise<typeof import("@peculiar/x509")> | undefined;
function x509Library(): Promise<typeof import("@peculiar/x509")> {
  loaded ??= (async () => {
    await import("reflect-metadata");
    const x509 = await import("@peculiar/x509");
    x509.cryptoProvider.set(webcrypto as Crypto);
    return x509;
  })();
  return loaded;
}

// ECDSA P-256: a handshake costs the test server a fraction of what RSA-2048 would, so benchmarks
// measure the resolver rather than the sample network's signing.
const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

const serial = () => {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString("hex");
};

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString("base64").replace(/.{64}/g, "$&\n");
  return `-----BEGIN ${label}-----\n${b64}${b64.endsWith("\n") ? "" : "\n"}-----END ${label}-----\n`;
}

/** Makes a CA and a certificate for `names` (DNS names, wildcards allowed), valid from yesterday for 30 days. */
export async function createTestCa(names: readonly string[]): Promise<TestCa> {
  const x509 = await x509Library();
  const notBefore = new Date(Date.now() - 24 * 3600_000);
  const notAfter = new Date(Date.now() + 30 * 24 * 3600_000);
  const caKeys = (await webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"])) as CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: "CN=ident sample network test CA",
    notBefore,
    notAfter,
    signingAlgorithm: ALG,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const leafKeys = (await webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"])) as CryptoKeyPair;
  const authorityKeyId = await x509.AuthorityKeyIdentifierExtension.create(ca);
  const certFor = async (sans: readonly string[]) => {
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: "CN=ident sample network",
      issuer: ca.subject,
      notBefore,
      notAfter,
      signingAlgorithm: ALG,
      publicKey: leafKeys.publicKey,
      signingKey: caKeys.privateKey,
      extensions: [
        new x509.BasicConstraintsExtension(false),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(sans.map((value) => ({ type: "dns" as const, value }))),
        authorityKeyId,
      ],
    });
    return leaf.toString("pem");
  };
  const certPem = await certFor(names);
  const keyDer = await webcrypto.subtle.exportKey("pkcs8", leafKeys.privateKey);
  return { caPem: ca.toString("pem"), certPem, keyPem: pem("PRIVATE KEY", keyDer), certFor };
}
