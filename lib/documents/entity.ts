/** The entity document, `https://{domain}/ident.json` (docs/protocol.md#entity-document, V1, V2). */
import { z } from "zod";
import { ID_PATTERNS, parseNetworkId, sameId } from "../protocol/ids.ts";
import { keptId } from "./display-limits.ts";
import { isRecord } from "./json.ts";
import { lenientFields, MAX_REPORTED_ENTRIES, parsedOnce, readEntries, type Entry } from "./lenient.ts";
import { error, warning, type Problem } from "./problem.ts";
import { CredentialEntry, readCredentialEntry } from "./credential.ts";
import { Property, readProperty } from "./property.ts";

export const NetworkId = z
  .string()
  .regex(new RegExp(ID_PATTERNS.networkId, "u"))
  .refine((v) => parseNetworkId(v) !== null, "not §:entity:{domain}")
  .describe("The entity's id, §:entity:{domain}, where the domain is the one serving this document.");

export const Details = z.object({
  name: z.string().optional().describe("Display name."),
  domain: z.string().optional().describe("Primary domain; usually the domain of network_id."),
  email: z.string().optional().describe("Public contact e-mail address."),
  location: z.string().optional().describe("Human-readable location."),
  legal_name: z.string().optional().describe("Formal legal name."),
  established: z.string().optional().describe("Year or date of establishment (organizations)."),
  registered_in: z.string().optional().describe("Jurisdiction of legal registration."),
  legal_entity_type: z.string().optional().describe("Such as LLC, Nonprofit."),
  description: z.string().optional().describe("One or two sentences."),
});
export type Details = z.infer<typeof Details>;

export const Connection = z.object({ id: z.string().min(1).describe("A profile URL on another service, checked by rel=me.") });
export type Connection = z.infer<typeof Connection>;

/** The entity document as published. Only `network_id` is required (V1). */
export const EntityDocument = z.object({
  version: z.string().optional().describe("The protocol version targeted, such as 0.9."),
  last_updated: z.string().optional().describe("ISO-8601 time of the last change."),
  entity_type: z.enum(["person", "organization"]).optional().describe("Drives the JSON-LD type."),
  network_id: NetworkId,
  details: Details.optional(),
  properties: z
    .array(Property)
    .max(MAX_REPORTED_ENTRIES)
    .optional()
    .describe("Sites the entity claims; each verifies when its property document names the entity back (V3)."),
  credentials: z
    .array(CredentialEntry)
    .max(MAX_REPORTED_ENTRIES)
    .optional()
    .describe("Credentials the entity claims; each verifies when the issuer's document names the entity (V4)."),
  other_connections: z.array(Connection).max(MAX_REPORTED_ENTRIES).optional().describe("Profiles on other services, checked by rel=me."),
});
export type EntityDocument = z.infer<typeof EntityDocument>;

/** An accepted entity document, each of its lists read entry by entry (V2). */
export type ParsedEntity = {
  network_id: string;
  /** The domain in network_id, as published. */
  domain: string;
  entity_type?: string;
  version?: string;
  last_updated?: string;
  details: Details;
  properties: Entry<Property>[];
  credentials: Entry<CredentialEntry>[];
  connections: Entry<Connection>[];
};

export type EntityParse = { ok: true; entity: ParsedEntity; problems: Problem[] } | { ok: false; code: string; problems: Problem[] };

/** Read leniently: an `entity_type` other than person/organization is only a warning. */
const optional = { entity_type: z.string(), version: EntityDocument.shape.version, last_updated: EntityDocument.shape.last_updated };
const detailFields = Details.shape;
/** Every details field is kept as a name (docs/decisions.md#validation) but the description. */
const detailLengths = { description: "description" } as const;

function readConnection(raw: unknown, path: string, problems: Problem[]): Connection | null {
  const parsed = Connection.safeParse(raw);
  if (!parsed.success) {
    problems.push(error("invalid_entry", `${path} has no id URL`, path));
    return null;
  }
  return { id: parsed.data.id };
}

function readEntityDocument(value: unknown, domain: string): EntityParse {
  const problems: Problem[] = [];
  if (!isRecord(value)) {
    return { ok: false, code: "not_an_object", problems: [error("not_an_object", "The entity document is not a JSON object")] };
  }
  const nid = value.network_id;
  if (nid === undefined || nid === null || nid === "") {
    return {
      ok: false,
      code: "missing_network_id",
      problems: [error("missing_network_id", "The entity document has no network_id", "network_id")],
    };
  }
  const claimed = typeof nid === "string" ? parseNetworkId(nid) : null;
  if (typeof nid !== "string" || claimed === null) {
    // docs/decisions.md#validation: what a message quotes of a publisher is kept to an id's length.
    const shown = keptId(typeof nid === "string" ? nid : JSON.stringify(nid));
    return {
      ok: false,
      code: "invalid_network_id",
      problems: [error("invalid_network_id", `network_id ${shown} is not of the form §:entity:{domain}`, "network_id")],
    };
  }
  // docs/decisions.md#validation [bind]: only the domain named in network_id may publish it.
  if (!sameId(claimed, domain)) {
    return {
      ok: false,
      code: "network_id_domain_mismatch",
      problems: [
        error(
          "network_id_domain_mismatch",
          `The document served by ${domain} claims to be ${claimed} (network_id ${nid}); only ${claimed} can publish that identity`,
          "network_id",
        ),
      ],
    };
  }
  const top = lenientFields(value, optional, "", problems);
  if (top.entity_type !== undefined && top.entity_type !== "person" && top.entity_type !== "organization") {
    problems.push(warning("unknown_entity_type", `entity_type "${top.entity_type}" is neither person nor organization`, "entity_type"));
  }
  let details: Details = {};
  if (value.details !== undefined) {
    if (isRecord(value.details)) details = lenientFields(value.details, detailFields, "details", problems, detailLengths);
    else problems.push(warning("invalid_field", "details is not an object and was ignored", "details"));
  }
  return {
    ok: true,
    problems,
    entity: {
      network_id: nid,
      domain: claimed,
      ...top,
      details,
      properties: readEntries(value.properties, "properties", problems, readProperty),
      credentials: readEntries(value.credentials, "credentials", problems, readCredentialEntry),
      connections: readEntries(value.other_connections, "other_connections", problems, readConnection),
    },
  };
}

const parses = parsedOnce(readEntityDocument);

/**
 * Validates an entity document (V1, V2, docs/decisions.md#validation). `domain` is the domain it was
 * fetched for: the domain in network_id must equal it. Parsed once per JSON value and domain.
 */
export function parseEntityDocument(value: unknown, domain: string): EntityParse {
  return parses(value, domain);
}
