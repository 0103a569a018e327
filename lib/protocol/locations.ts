import type { CredentialId } from "./ids.ts";

/** Which of the three documents (docs/protocol.md#v7-the-html-fallback). */
export type DocumentKind = "entity" | "property" | "credential";

/** Where a document and its HTML fallback live (docs/decisions.md#where-documents-live). */
export type DocumentLocation = {
  kind: DocumentKind;
  /** The JSON URL. */
  json: string;
  /** The page whose `<script>` embed is the fallback (V7). */
  page: string;
  /** The element id of the embed (docs/protocol.md#v7-the-html-fallback). */
  elementId: "ident-hub" | "ident-property" | "ident-credential";
};

/** Entity of `D`: `https://D/ident.json`, fallback `https://D/` `#ident-hub`. */
export function entityLocation(domain: string): DocumentLocation {
  const host = domain.toLowerCase();
  return { kind: "entity", json: `https://${host}/ident.json`, page: `https://${host}/`, elementId: "ident-hub" };
}

/** Property `§:property:D`: `https://D/ident-property.json`, fallback `https://D/` `#ident-property`. */
export function propertyLocation(domain: string): DocumentLocation {
  const host = domain.toLowerCase();
  return {
    kind: "property",
    json: `https://${host}/ident-property.json`,
    page: `https://${host}/`,
    elementId: "ident-property",
  };
}

/**
 * Credential `@u@D[/p]`: `https://D[/p]/u/ident-credential.json`, fallback `https://D[/p]/u`
 * `#ident-credential`. The `/p` is a prefix on the issuer's site (docs/decisions.md#where-documents-live). The username and path
 * keep their casing: URL paths are case-sensitive on the issuer's server.
 */
export function credentialLocation(id: CredentialId): DocumentLocation {
  const base = `https://${id.domain.toLowerCase()}${id.path ? `/${id.path}` : ""}/${id.username}`;
  return { kind: "credential", json: `${base}/ident-credential.json`, page: base, elementId: "ident-credential" };
}
