import { z } from "zod";
import { safeUrl } from "../present/display";
import { idKey, parseCredentialId, parseNetworkId, parsePropertyId, sameId } from "../protocol/ids";

/** A finding about a document or claim (SPEC §7). */
export const Problem = z.object({
  code: z.string(),
  severity: z.enum(["error", "warning"]),
  message: z.string(),
  path: z.string().optional(),
});
export type Problem = z.infer<typeof Problem>;

export const warning = (code: string, message: string, path?: string): Problem =>
  path === undefined ? { code, severity: "warning", message } : { code, severity: "warning", message, path };
export const error = (code: string, message: string, path?: string): Problem =>
  path === undefined ? { code, severity: "error", message } : { code, severity: "error", message, path };

export type JsonParse = { ok: true; value: unknown } | { ok: false; message: string };

/** Deepest nesting accepted. Real documents are about 5 deep; JSON.stringify overflows near 5,000. */
export const MAX_JSON_DEPTH = 64;

/** The deepest array/object nesting of a JSON text, in one pass without recursion. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/**
 * Parses an untrusted JSON text. A text nested deeper than {@link MAX_JSON_DEPTH} is refused: it
 * would parse, but every later JSON.stringify of the result (API, CLI) would overflow the stack.
 */
export function parseJson(text: string): JsonParse {
  if (jsonDepth(text) > MAX_JSON_DEPTH) return { ok: false, message: `nested deeper than ${MAX_JSON_DEPTH} levels` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : "not JSON" };
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Reads the optional fields of an object leniently (SPEC §5): a present field that fails its schema
 * is dropped with an `invalid_field` warning at its path; a URL field that is not an absolute
 * http(s) URL is kept as text with an `unsafe_url` warning.
 */
function lenientFields<S extends Record<string, z.ZodType>>(
  obj: Record<string, unknown>,
  shape: S,
  path: string,
  problems: Problem[],
  urlFields: readonly (keyof S)[] = [],
): { [K in keyof S]?: z.infer<S[K]> } {
  const out: { [K in keyof S]?: z.infer<S[K]> } = {};
  for (const [key, schema] of Object.entries(shape) as [keyof S & string, z.ZodType][]) {
    if (!(key in obj) || obj[key] === undefined) continue;
    const where = path ? `${path}.${key}` : key;
    const parsed = schema.safeParse(obj[key]);
    if (!parsed.success) {
      problems.push(warning("invalid_field", `${where} has the wrong type and was ignored`, where));
      continue;
    }
    out[key] = parsed.data as z.infer<S[typeof key]>;
    if (urlFields.includes(key) && typeof parsed.data === "string" && safeUrl(parsed.data) === null) {
      problems.push(warning("unsafe_url", `${where} is not an absolute https: or http: URL; shown as text`, where));
    }
  }
  return out;
}

// ---- Details (seed §2.2) ----

export const DETAIL_FIELDS = [
  "name",
  "domain",
  "email",
  "location",
  "legal_name",
  "established",
  "registered_in",
  "legal_entity_type",
  "description",
] as const;
export const Details = z.object(Object.fromEntries(DETAIL_FIELDS.map((f) => [f, z.string().optional()])));
export type Details = Partial<Record<(typeof DETAIL_FIELDS)[number], string>>;

// ---- Property (seed §2.3) ----

export const PropertyId = z.string().refine((v) => parsePropertyId(v) !== null, "not §:property:{domain}");
export const PropertyOwner = z.object({ network_id: z.string() });

const propertyOptional = {
  name: z.string(),
  url: z.string(),
  type: z.string(),
  description: z.string(),
};

export type Property = {
  id: string;
  name?: string;
  url?: string;
  type?: string;
  description?: string;
  ownership?: string[];
};

/** Warnings listed one by one about a single array, before the rest are counted in one line. */
const MAX_LISTED_WARNINGS = 20;

/**
 * Entries of one list reported claim by claim; past this, one warning counts the rest, so a 1 MiB
 * document of 350,000 tiny entries cannot become a result of tens of megabytes.
 */
export const MAX_REPORTED_ENTRIES = 1000;

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
    else if (++bad <= MAX_LISTED_WARNINGS) problems.push(warning("invalid_field", `${path}[${i}] has no network_id string and was ignored`, `${path}[${i}]`));
  });
  if (bad > MAX_LISTED_WARNINGS) problems.push(warning("invalid_field", `${bad - MAX_LISTED_WARNINGS} more entries of ${path} have no network_id string and were ignored`, path));
  return owners;
}

/** A Property object with a valid id, or null (problems say why). Other fields are lenient. */
function readProperty(value: unknown, path: string, problems: Problem[]): Property | null {
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
  const fields = lenientFields(value, propertyOptional, path, problems, ["url"]);
  const ownership = readOwnership(value.ownership, path ? `${path}.ownership` : "ownership", problems);
  return { id: id.data, ...fields, ...(ownership ? { ownership } : {}) };
}

// ---- Credential (seed §2.5) ----

export const CredentialId = z.string().refine((v) => parseCredentialId(v) !== null, "not @user@domain[/path]");
export const Dataset = z.object({ id: z.string().optional(), name: z.string().optional() });
export type Dataset = z.infer<typeof Dataset>;

const credentialOptional = {
  id: z.string(),
  title: z.string(),
  type: z.string(),
  description: z.string(),
  dataset: Dataset,
  profile_url: z.string(),
};

export type Credential = {
  id?: string;
  title?: string;
  type?: string;
  description?: string;
  property?: Property;
  dataset?: Dataset;
  profile_url?: string;
};

function readCredential(value: Record<string, unknown>, path: string, problems: Problem[]): Credential {
  const fields = lenientFields(value, credentialOptional, path, problems, ["profile_url"]);
  const credential: Credential = { ...fields };
  if (value.property !== undefined) {
    const where = path ? `${path}.property` : "property";
    const sub: Problem[] = [];
    const property = readProperty(value.property, where, sub);
    // The nested issuer property only adds context (V5): a bad one is a warning, never a failure.
    problems.push(...sub.map((p) => ({ ...p, severity: "warning" as const, code: p.code === "invalid_entry" ? "invalid_field" : p.code })));
    if (property) credential.property = property;
  }
  return credential;
}

// ---- Entity document (seed §2.1, V1, V2) ----

/** One entry of `properties[]`, `credentials[]` or `other_connections[]`, validated alone (V2). */
export type Entry<T> = {
  index: number;
  /** The id as published, when it is a string. */
  id: string | null;
  /** The entry exactly as published. */
  raw: unknown;
  problems: Problem[];
} & ({ ok: true; value: T } | { ok: false; reason: "invalid_entry" | "duplicate" });

export type Connection = { id: string };

export type EntityDocument = {
  network_id: string;
  /** The domain in network_id, as published. */
  domain: string;
  entity_type?: string;
  version?: string;
  last_updated?: string;
  details: Details;
  properties: Entry<Property>[];
  credentials: Entry<Credential & { id: string }>[];
  connections: Entry<Connection>[];
};

export type EntityParse =
  | { ok: true; entity: EntityDocument; problems: Problem[] }
  | { ok: false; code: string; problems: Problem[] };

const entityOptional = { entity_type: z.string(), version: z.string(), last_updated: z.string() };

function readEntries<T>(
  value: unknown,
  field: string,
  problems: Problem[],
  read: (entry: unknown, path: string, problems: Problem[]) => T | null,
  idOf: (entry: unknown) => string | null,
): Entry<T>[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push(warning("invalid_field", `${field} is not an array and was ignored`, field));
    return [];
  }
  if (value.length > MAX_REPORTED_ENTRIES) {
    problems.push(
      warning("too_many_entries", `${field} has ${value.length} entries; only the first ${MAX_REPORTED_ENTRIES} are reported, and the rest are ignored`, field),
    );
  }
  const seen = new Set<string>();
  return value.slice(0, MAX_REPORTED_ENTRIES).map((raw, index): Entry<T> => {
    const path = `${field}[${index}]`;
    const entryProblems: Problem[] = [];
    const id = idOf(raw);
    const parsed = read(raw, path, entryProblems);
    if (parsed === null) return { index, id, raw, problems: entryProblems, ok: false, reason: "invalid_entry" };
    const key = idKey(id ?? "");
    if (seen.has(key)) {
      entryProblems.push(error("duplicate", `${path} repeats the id ${id} of an earlier entry`, path));
      return { index, id, raw, problems: entryProblems, ok: false, reason: "duplicate" };
    }
    seen.add(key);
    return { index, id, raw, problems: entryProblems, ok: true, value: parsed };
  });
}

const stringId = (raw: unknown): string | null => (isRecord(raw) && typeof raw.id === "string" ? raw.id : null);

function readCredentialEntry(raw: unknown, path: string, problems: Problem[]): (Credential & { id: string }) | null {
  if (!isRecord(raw)) {
    problems.push(error("invalid_entry", `${path} is not an object`, path));
    return null;
  }
  if (!CredentialId.safeParse(raw.id).success) {
    problems.push(error("invalid_entry", `${path}.id is missing or not of the form @user@domain[/path]`, `${path}.id`));
    return null;
  }
  return { ...readCredential(raw, path, problems), id: raw.id as string };
}

function readConnection(raw: unknown, path: string, problems: Problem[]): Connection | null {
  if (!isRecord(raw) || typeof raw.id !== "string" || raw.id === "") {
    problems.push(error("invalid_entry", `${path} has no id URL`, path));
    return null;
  }
  return { id: raw.id };
}

/**
 * Validates an entity document (V1, V2, SPEC §5). `domain` is the domain it was fetched for: the
 * domain in network_id must equal it (SPEC §5 [bind]).
 */
export function parseEntityDocument(value: unknown, domain: string): EntityParse {
  return entityParses(value, domain);
}

function readEntityDocument(value: unknown, domain: string): EntityParse {
  const problems: Problem[] = [];
  if (!isRecord(value)) {
    return { ok: false, code: "not_an_object", problems: [error("not_an_object", "The entity document is not a JSON object")] };
  }
  const nid = value.network_id;
  if (nid === undefined || nid === null || nid === "") {
    return { ok: false, code: "missing_network_id", problems: [error("missing_network_id", "The entity document has no network_id", "network_id")] };
  }
  const claimed = typeof nid === "string" ? parseNetworkId(nid) : null;
  if (typeof nid !== "string" || claimed === null) {
    const shown = typeof nid === "string" ? nid : JSON.stringify(nid);
    return {
      ok: false,
      code: "invalid_network_id",
      problems: [error("invalid_network_id", `network_id ${shown} is not of the form §:entity:{domain}`, "network_id")],
    };
  }
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
  const top = lenientFields(value, entityOptional, "", problems);
  if (top.entity_type !== undefined && top.entity_type !== "person" && top.entity_type !== "organization") {
    problems.push(warning("unknown_entity_type", `entity_type "${top.entity_type}" is neither person nor organization`, "entity_type"));
  }
  let details: Details = {};
  if (value.details !== undefined) {
    if (isRecord(value.details)) {
      const shape = Object.fromEntries(DETAIL_FIELDS.map((f) => [f, z.string()]));
      details = lenientFields(value.details, shape, "details", problems) as Details;
    } else {
      problems.push(warning("invalid_field", "details is not an object and was ignored", "details"));
    }
  }
  return {
    ok: true,
    problems,
    entity: {
      network_id: nid,
      domain: claimed,
      ...top,
      details,
      properties: readEntries(value.properties, "properties", problems, readProperty, stringId),
      credentials: readEntries(value.credentials, "credentials", problems, readCredentialEntry, stringId),
      connections: readEntries(value.other_connections, "other_connections", problems, readConnection, stringId),
    },
  };
}

// ---- Property document (seed §2.4) ----

export type PropertyDocument = { ident_property: Property & { ownership: string[] } };
export type DocumentParse<T> = { ok: true; doc: T; problems: Problem[] } | { ok: false; problems: Problem[] };

/** `{"ident_property": {id, ownership, ...}}`; `id` and `ownership` are required (SPEC §5). */
export function parsePropertyDocument(value: unknown): DocumentParse<PropertyDocument> {
  return propertyParses(value, "");
}

function readPropertyDocument(value: unknown): DocumentParse<PropertyDocument> {
  const problems: Problem[] = [];
  if (!isRecord(value) || !isRecord(value.ident_property)) {
    return { ok: false, problems: [error("invalid_document", "The property document has no ident_property object")] };
  }
  const inner = value.ident_property;
  const property = readProperty(inner, "ident_property", problems);
  if (!property) return { ok: false, problems: problems.map((p) => ({ ...p, code: "invalid_document" })) };
  if (!Array.isArray(inner.ownership)) {
    return {
      ok: false,
      problems: [...problems, error("invalid_document", "ident_property.ownership is missing or not an array", "ident_property.ownership")],
    };
  }
  return { ok: true, doc: { ident_property: { ...property, ownership: property.ownership ?? [] } }, problems };
}

// ---- Credential document (seed §2.6, V5) ----

export type CredentialDocument = { ident_entity_id: string; ident_credential: Credential & { title: string } };

/** `ident_entity_id` and `ident_credential.title` are required (V5); everything else adds context. */
export function parseCredentialDocument(value: unknown): DocumentParse<CredentialDocument> {
  return credentialParses(value, "");
}

function readCredentialDocument(value: unknown): DocumentParse<CredentialDocument> {
  if (!isRecord(value)) return { ok: false, problems: [error("invalid_document", "The credential document is not a JSON object")] };
  if (typeof value.ident_entity_id !== "string" || value.ident_entity_id === "") {
    return { ok: false, problems: [error("invalid_document", "The credential document has no ident_entity_id", "ident_entity_id")] };
  }
  if (!isRecord(value.ident_credential)) {
    return { ok: false, problems: [error("invalid_document", "The credential document has no ident_credential object", "ident_credential")] };
  }
  const title = value.ident_credential.title;
  if (typeof title !== "string" || title.trim() === "") {
    return { ok: false, problems: [error("invalid_document", "ident_credential has no title", "ident_credential.title")] };
  }
  const problems: Problem[] = [];
  const credential = readCredential(value.ident_credential, "ident_credential", problems);
  return { ok: true, doc: { ident_entity_id: value.ident_entity_id, ident_credential: { ...credential, title } }, problems };
}

// ---- Parsed once ----

/**
 * `parse`, remembered per parsed JSON value and `key` while the value lives. A cached document's JSON
 * value is parsed once (lib/resolver.ts), so a warm page does not validate it again on every request.
 * Results are shared: callers copy before they add to them.
 */
function parsedOnce<R>(parse: (value: unknown, key: string) => R): (value: unknown, key: string) => R {
  const seen = new WeakMap<object, { key: string; result: R }>();
  return (value, key) => {
    if (typeof value !== "object" || value === null) return parse(value, key);
    const hit = seen.get(value);
    if (hit && hit.key === key) return hit.result;
    const result = parse(value, key);
    seen.set(value, { key, result });
    return result;
  };
}

const entityParses = parsedOnce(readEntityDocument);
const propertyParses = parsedOnce((value) => readPropertyDocument(value));
const credentialParses = parsedOnce((value) => readCredentialDocument(value));
