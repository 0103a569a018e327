/** The property: an entry of an entity's `properties[]`, and the property document (docs/protocol.md#property). */
import { z } from "zod";
import { extend } from "../objects.ts";
import { ID_PATTERNS, parsePropertyId } from "../protocol/ids.ts";
import { isRecord } from "./json.ts";
import { lenientFields, MAX_LISTED_WARNINGS, parsedOnce, type DocumentParse } from "./lenient.ts";
import { error, warning, type Problem } from "./problem.ts";

export const PropertyId = z
  .string()
  .regex(new RegExp(ID_PATTERNS.propertyId, "u"))
  .refine((v) => parsePropertyId(v) !== null, "not §:property:{domain}")
  .describe("The property's id, §:property:{domain}, where the domain serves the property document.");

/**
 * An absolute http(s) URL, for editors; the resolver's own test is WHATWG URL parsing (lib/present/display.ts
 * `safeUrl`), which a pattern can only approach. Metadata only: parsing a document never uses it.
 */
export const URL_PATTERN = "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+";

export const PropertyOwner = z.object({
  network_id: z.string().describe("The owner's network_id, §:entity:{domain}."),
});

/** The owners' network_ids, read from `[{"network_id": ...}]`. */
const Ownership = z
  .array(PropertyOwner)
  .transform((owners) => owners.map((o) => o.network_id))
  .describe("The entities that own the property; each owner verifies on its own.");

export const Property = z.object({
  id: PropertyId,
  name: z.string().optional().describe("A human-readable name, shown on result pages."),
  url: z.string().meta({ pattern: URL_PATTERN }).optional().describe("The public home page (an absolute https: URL)."),
  type: z.string().optional().describe("A free-form classification, such as Website or Newsletter."),
  description: z.string().optional().describe("One or two sentences."),
  ownership: Ownership.optional(),
});
export type Property = z.infer<typeof Property>;

/** `{"ident_property": {...}}`, served at `https://{domain}/ident-property.json`; `id` and `ownership` are required. */
export const PropertyDocument = z.object({ ident_property: Property.extend({ ownership: Ownership }) });
export type PropertyDocument = z.infer<typeof PropertyDocument>;

const optional = { name: Property.shape.name, url: Property.shape.url, type: Property.shape.type, description: Property.shape.description };

function readOwnership(value: unknown, path: string, problems: Problem[]): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    problems.push(warning("invalid_field", `${path} is not an array and was ignored`, path));
    return undefined;
  }
  const owners: string[] = [];
  let bad = 0;
  value.forEach((owner, i) => {
    const parsed = PropertyOwner.safeParse(owner);
    if (parsed.success) owners.push(parsed.data.network_id);
    else if (++bad <= MAX_LISTED_WARNINGS)
      problems.push(warning("invalid_field", `${path}[${i}] has no network_id string and was ignored`, `${path}[${i}]`));
  });
  if (bad > MAX_LISTED_WARNINGS) {
    problems.push(
      warning("invalid_field", `${bad - MAX_LISTED_WARNINGS} more entries of ${path} have no network_id string and were ignored`, path),
    );
  }
  return owners;
}

/** A Property object with a valid id, or null (problems say why). Other fields are lenient; bad owners are skipped. */
export function readProperty(value: unknown, path: string, problems: Problem[]): Property | null {
  if (!isRecord(value)) {
    problems.push(error("invalid_entry", `${path || "the property"} is not an object`, path || undefined));
    return null;
  }
  const id = PropertyId.safeParse(value.id);
  if (!id.success) {
    const where = path ? `${path}.id` : "id";
    problems.push(error("invalid_entry", `${where} is missing or not of the form §:property:{domain}`, where));
    return null;
  }
  const fields = lenientFields(value, optional, path, problems, { url: "url", description: "description" });
  const ownership = readOwnership(value.ownership, path ? `${path}.ownership` : "ownership", problems);
  return { id: id.data, ...fields, ...(ownership ? { ownership } : {}) };
}

function readPropertyDocument(value: unknown): DocumentParse<PropertyDocument> {
  const problems: Problem[] = [];
  if (!isRecord(value) || !isRecord(value.ident_property)) {
    return { ok: false, problems: [error("invalid_document", "The property document has no ident_property object")] };
  }
  const inner = value.ident_property;
  const property = readProperty(inner, "ident_property", problems);
  if (!property) return { ok: false, problems: problems.map((p) => extend(p, { code: "invalid_document" })) };
  if (!Array.isArray(inner.ownership)) {
    return {
      ok: false,
      problems: [...problems, error("invalid_document", "ident_property.ownership is missing or not an array", "ident_property.ownership")],
    };
  }
  return { ok: true, doc: { ident_property: extend(property, { ownership: property.ownership ?? [] }) }, problems };
}

const parses = parsedOnce((value) => readPropertyDocument(value));

/** Reads a property document (docs/decisions.md#validation); parsed once per JSON value. */
export function parsePropertyDocument(value: unknown): DocumentParse<PropertyDocument> {
  return parses(value, "");
}
