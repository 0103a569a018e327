import type { EducationalOccupationalCredential, Organization, Person, Thing, WithContext } from "schema-dts";
import { clipDescription, clipName, safeUrl } from "../documents/display-limits.ts";
import type { Details } from "../documents/entity.ts";
import { extend } from "../objects.ts";

/** What the JSON-LD of one entity is built from: only accepted entities and verified claims. */
export type JsonLdInput = {
  domain: string;
  network_id: string;
  entity_type?: string;
  details: Details;
  /** URLs of verified properties. */
  propertyUrls: string[];
  /** URLs of verified connections. */
  connectionUrls: string[];
  /** Verified credentials, with the issuer's own title. */
  credentials: { title: string; type?: string; issuerName: string; issuerDomain: string; url?: string }[];
};

/**
 * The JSON-LD of an entity. Built and checked against schema-dts's types (below); said here without
 * them, so the package's declarations need no schema-dts (docs/library.md#what-installing-it-brings).
 */
export type EntityJsonLd = { "@context": "https://schema.org"; "@type": "Person" | "Organization" | "Thing" } & Record<string, unknown>;

/**
 * schema.org JSON-LD of an accepted entity (docs/protocol.md#overview, docs/decisions.md#json-ld): `Person` or `Organization` from
 * `entity_type` (`Thing` otherwise), with verified properties and connections as `sameAs` and verified
 * credentials as `hasCredential`. Text is cut to the display limits; only http(s) URLs are kept.
 */
export function buildJsonLd(input: JsonLdInput): EntityJsonLd {
  const d = input.details;
  const sameAs = [...new Set([...input.propertyUrls, ...input.connectionUrls].map(safeUrl).filter((u): u is string => u !== null))];
  const hasCredential: EducationalOccupationalCredential[] = input.credentials.map((c) => {
    const url = c.url ? safeUrl(c.url) : null;
    return {
      "@type": "EducationalOccupationalCredential",
      name: clipName(c.title),
      ...(c.type ? { credentialCategory: clipName(c.type) } : {}),
      ...(url ? { url } : {}),
      recognizedBy: { "@type": "Organization", name: clipName(c.issuerName), url: `https://${c.issuerDomain}/` },
    };
  });
  const common = {
    "@context": "https://schema.org" as const,
    ...(d.name ? { name: clipName(d.name) } : {}),
    url: `https://${input.domain}/`,
    ...(d.description ? { description: clipDescription(d.description) } : {}),
    identifier: input.network_id,
    ...(sameAs.length > 0 ? { sameAs } : {}),
  };
  const email = d.email ? { email: clipName(d.email) } : {};
  const credentials = hasCredential.length > 0 ? { hasCredential } : {};
  if (input.entity_type === "person") {
    return extend(common, { "@type": "Person" as const, ...email, ...credentials }) satisfies WithContext<Person>;
  }
  if (input.entity_type === "organization") {
    return extend(common, {
      "@type": "Organization" as const,
      ...email,
      ...(d.legal_name ? { legalName: clipName(d.legal_name) } : {}),
      ...(d.established ? { foundingDate: clipName(d.established) } : {}),
      ...(d.location ? { location: clipName(d.location) } : {}),
      ...credentials,
    }) satisfies WithContext<Organization>;
  }
  return extend(common, { "@type": "Thing" as const }) satisfies WithContext<Thing>;
}

/**
 * The JSON-LD of an entity's own page (docs/decisions.md#json-ld): a schema.org `ProfilePage` whose
 * `mainEntity` is the entity's `Person` or `Organization`, modified when the entity was last checked.
 */
export function profilePage(entity: Record<string, unknown>, page: { url: string; dateModified: string }): Record<string, unknown> {
  const mainEntity = Object.fromEntries(Object.entries(entity).filter(([key]) => key !== "@context"));
  return { "@context": "https://schema.org", "@type": "ProfilePage", url: page.url, dateModified: page.dateModified, mainEntity };
}

/**
 * What a script element's text must not hold as it is: `<`, `>` and `&` (no text can close the
 * element), U+2028 and U+2029, and what HTML calls a parse error in any text (DEL, the C1 controls,
 * the noncharacters U+FDD0–U+FDEF, U+FFFE and U+FFFF; JSON.stringify escapes the C0 controls itself).
 */
const SCRIPT_UNSAFE = /[<>&\u2028\u2029\u007f-\u009f\ufdd0-\ufdef\ufffe\uffff]/g;

/**
 * JSON for a `<script type="application/ld+json">` body (docs/decisions.md#json-ld): each character
 * of {@link SCRIPT_UNSAFE} becomes its `\u003c`-style escape, so the JSON parses to the same value.
 */
export function serializeJsonLd(value: unknown): string {
  return JSON.stringify(value).replace(SCRIPT_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
