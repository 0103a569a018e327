import { extractLinks } from "../documents/embed";
import { sameId } from "../protocol/ids";
import type { CredentialDocument, PropertyDocument } from "../documents/schemas";

/** Every reason a claim can fail (SPEC §6): a closed set. */
export const REASONS = [
  "invalid_entry",
  "duplicate",
  "limit",
  "not_found",
  "unreachable",
  "timeout",
  "too_large",
  "blocked",
  "invalid_document",
  "id_mismatch",
  "not_listed",
  "not_claimed",
  "entity_mismatch",
  "unsafe_url",
  "no_backlink",
] as const;
export type Reason = (typeof REASONS)[number];

/** The verdict of one rule: verified, or a reason with a message in plain words. */
export type Verdict = { verified: true } | { verified: false; reason: Reason; message: string };

/**
 * V3 with SPEC §6 [bind]: property `propertyId` of the entity `networkId` verifies when the
 * property document's `id` equals `propertyId` and its `ownership[]` names `networkId`.
 */
export function verifyProperty(networkId: string, propertyId: string, doc: PropertyDocument, host: string): Verdict {
  const property = doc.ident_property;
  if (!sameId(property.id, propertyId)) {
    return {
      verified: false,
      reason: "id_mismatch",
      message: `${host}'s property document is about ${property.id}, not ${propertyId}; it must carry the id it is served for`,
    };
  }
  if (!property.ownership.some((owner) => sameId(owner, networkId))) {
    return {
      verified: false,
      reason: "not_listed",
      message: `${host}'s property document does not name ${networkId} among its owners; ${host} must add it to ownership[]`,
    };
  }
  return { verified: true };
}

/**
 * V4, V5: a credential verifies when its document's `ident_entity_id` equals the entity's
 * `network_id`. The document has already passed V5's minimum (ident_entity_id and a title).
 */
export function verifyCredential(networkId: string, doc: CredentialDocument, issuer: string): Verdict {
  if (!sameId(doc.ident_entity_id, networkId)) {
    return {
      verified: false,
      reason: "entity_mismatch",
      message: `${issuer}'s credential document names ${doc.ident_entity_id}, not this entity (${networkId})`,
    };
  }
  return { verified: true };
}

/** Whether a connection URL may be fetched at all: only `https:` (SPEC §6). */
export function connectionUrl(id: string): URL | null {
  try {
    const url = new URL(id);
    return url.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

/**
 * SPEC §6 rel=me: the page at the connection URL has an `<a>` or `<link>` whose `rel` has the token
 * `me` and whose `href` is `https://{domain}` with path `/` or none.
 */
export function verifyConnection(domain: string, pageUrl: string, html: string): Verdict {
  for (const link of extractLinks(html)) {
    const tokens = link.rel.toLowerCase().split(/[\t\n\f\r ]+/);
    if (!tokens.includes("me")) continue;
    let href: URL;
    try {
      href = new URL(link.href.trim(), pageUrl);
    } catch {
      continue;
    }
    if (
      href.protocol === "https:" &&
      href.port === "" &&
      href.username === "" &&
      href.password === "" &&
      sameId(href.hostname, domain) &&
      href.pathname === "/" &&
      href.search === "" &&
      href.hash === ""
    ) {
      return { verified: true };
    }
  }
  return {
    verified: false,
    reason: "no_backlink",
    message: `The page at ${pageUrl} has no <a> or <link> with rel="me" pointing back to https://${domain}/`,
  };
}
