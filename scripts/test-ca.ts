import { generateKeyPairSync, randomBytes } from "node:crypto";
import forge from "node-forge";

/** A throw-away CA and one server certificate it signed, made in memory; nothing is committed. */
export type TestCa = { caPem: string; certPem: string; keyPem: string };

function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return { publicKey: forge.pki.publicKeyFromPem(publicKey), privateKey: forge.pki.privateKeyFromPem(privateKey), privatePem: privateKey };
}

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f; // positive
  return bytes.toString("hex");
}

function validity(cert: forge.pki.Certificate) {
  cert.validity.notBefore = new Date(Date.now() - 24 * 3600 * 1000);
  cert.validity.notAfter = new Date(Date.now() + 30 * 24 * 3600 * 1000);
}

/** Makes a CA and a certificate for `names` (DNS names, wildcards allowed). */
export function createTestCa(names: readonly string[]): TestCa {
  const ca = keyPair();
  const caCert = forge.pki.createCertificate();
  caCert.publicKey = ca.publicKey;
  caCert.serialNumber = serial();
  validity(caCert);
  const caSubject = [{ name: "commonName", value: "ident sample network test CA" }];
  caCert.setSubject(caSubject);
  caCert.setIssuer(caSubject);
  caCert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  caCert.sign(ca.privateKey, forge.md.sha256.create());

  const leaf = keyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = leaf.publicKey;
  cert.serialNumber = serial();
  validity(cert);
  cert.setSubject([{ name: "commonName", value: "ident sample network" }]);
  cert.setIssuer(caSubject);
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: names.map((value) => ({ type: 2, value })) },
    { name: "authorityKeyIdentifier", keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(ca.privateKey, forge.md.sha256.create());

  return { caPem: forge.pki.certificateToPem(caCert), certPem: forge.pki.certificateToPem(cert), keyPem: leaf.privatePem };
}
