/**
 * What a counterpart must publish for a claim to verify (docs/publishing.md#check): the entry or
 * field to add, and the whole document with the change made. Each is checked by applying it to the
 * sample network and resolving again (test/integration/check.test.ts).
 */
import { isRecord } from "../documents/json.ts";
import { parseCredentialId, parsePropertyId } from "../protocol/ids.ts";
import { credentialLocation, propertyLocation } from "../protocol/locations.ts";
import { isAbout, namesOwner } from "../rules/property.ts";
import { pretty, type Snippet } from "./report.ts";
import { extend } from "../objects.ts";

const str = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v : undefined);

/** The property entry the entity claims, as far as it can be copied into the property document. */
function propertyFields(claimed: unknown): Record<string, string> {
  const c = isRecord(claimed) ? claimed : {};
  const out: Record<string, string> = {};
  for (const key of ["name", "url", "type", "description"]) {
    const v = str(c[key]);
    if (v) out[key] = v;
  }
  return out;
}

/** The owners already listed in a property document, kept as published when they are objects. */
function ownersOf(doc: unknown): unknown[] {
  if (!isRecord(doc) || !isRecord(doc.ident_property)) return [];
  const owners = doc.ident_property.ownership;
  return Array.isArray(owners) ? owners.filter((o) => isRecord(o)) : [];
}

/** Whether the published owners name `networkId`, by the rule itself (V3). */
const listed = (owners: unknown[], networkId: string) =>
  namesOwner(
    owners.flatMap((o) => (isRecord(o) && typeof o.network_id === "string" ? [o.network_id] : [])),
    networkId,
  );

/**
 * The property document at `https://{domain}/ident-property.json` that names `networkId` as an
 * owner: the published one corrected (its id, its owner list), or a new one from the claim.
 */
export function propertyFix(propertyId: string, networkId: string, claimed: unknown, published: unknown): Snippet {
  const current = isRecord(published) && isRecord(published.ident_property) ? published.ident_property : null;
  const owners = ownersOf(published);
  const entry = { network_id: networkId };
  const document = extend(isRecord(published) ? published : {}, {
    ident_property: Object.assign({}, propertyFields(claimed), current, {
      id: propertyId,
      ownership: listed(owners, networkId) ? owners : [...owners, entry],
    }),
  });
  if (current && owners.length > 0 && !listed(owners, networkId)) {
    return { where: "Add this entry to ident_property.ownership", language: "json", text: pretty(entry), document };
  }
  if (current && typeof current.id === "string" && !isAbout(current.id, propertyId)) {
    return { where: "Set ident_property.id to", language: "json", text: pretty(propertyId), document };
  }
  return { where: "Publish this document", language: "json", text: pretty(document), document };
}

/** The credential document an issuer must serve for `credentialId`, naming `networkId` as its holder. */
export function credentialFix(credentialId: string, networkId: string, claimed: unknown, published: unknown): Snippet {
  const c = isRecord(claimed) ? claimed : {};
  const current = isRecord(published) && isRecord(published.ident_credential) ? published.ident_credential : null;
  const title = str(current?.title) ?? str(c.title) ?? str(c.type) ?? "Member";
  const document = extend(isRecord(published) ? published : {}, {
    ident_entity_id: networkId,
    ident_credential: Object.assign({}, str(c.type) ? { type: str(c.type) } : {}, current, { id: credentialId, title }),
  });
  if (current && str(current.title) && isRecord(published) && published.ident_entity_id !== networkId) {
    return { where: "Set ident_entity_id to", language: "json", text: pretty(networkId), document };
  }
  return { where: "Publish this document", language: "json", text: pretty(document), document };
}

/** The link a profile page must carry for a connection to verify (rel=me). */
export function backlinkFix(domain: string): Snippet {
  return {
    where: "Add this link to the profile page",
    language: "html",
    text: `<a rel="me" href="https://${domain.toLowerCase()}/">https://${domain.toLowerCase()}/</a>`,
  };
}

/** The entry an entity must list to claim a property or a credential. */
export function claimEntryFix(kind: "property" | "credential", id: string, fields: Record<string, string>): Snippet {
  const list = kind === "property" ? "properties" : "credentials";
  return { where: `Add this entry to ${list} in /ident.json`, language: "json", text: pretty({ id, ...fields }) };
}

/** The URL a counterpart document must be served from. */
export function counterpartUrl(kind: "property" | "credential", id: string): string | null {
  if (kind === "property") {
    const domain = parsePropertyId(id);
    return domain ? propertyLocation(domain).json : null;
  }
  const parsed = parseCredentialId(id);
  return parsed ? credentialLocation(parsed).json : null;
}
