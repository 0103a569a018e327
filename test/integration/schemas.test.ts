/**
 * The JSON Schemas (docs/publishing.md#schemas) and the resolver give the same answer: a document the
 * schema accepts is one the resolver reads without a single problem, and the other way round, for
 * every document of the sample network and for documents made to sit on each boundary.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parseCredentialDocument } from "ident-resolver";
import { parseEntityDocument } from "ident-resolver";
import { parsePropertyDocument } from "ident-resolver";
import { isRecord } from "ident-resolver";
import { documentSchema, SCHEMA_KINDS, type SchemaKind } from "ident-resolver";
import { parseNetworkId } from "ident-resolver";

const ROOT = path.resolve(import.meta.dirname, "../../sample-network");
const ajv = new Ajv2020({ allErrors: true });
const validators = Object.fromEntries(SCHEMA_KINDS.map((k) => [k, ajv.compile(documentSchema(k, "https://resolver.example"))])) as Record<
  SchemaKind,
  ReturnType<typeof ajv.compile>
>;

/** The resolver's answer: read with no problem at all, neither an error nor a warning, on any entry. */
function resolverAccepts(kind: SchemaKind, doc: unknown): boolean {
  if (kind === "property") {
    const parsed = parsePropertyDocument(doc);
    return parsed.ok && parsed.problems.length === 0;
  }
  if (kind === "credential") {
    const parsed = parseCredentialDocument(doc);
    return parsed.ok && parsed.problems.length === 0;
  }
  // Served from the domain it names, as it will be (the binding is the one rule a schema cannot see).
  const nid = isRecord(doc) && typeof doc.network_id === "string" ? doc.network_id : "";
  const parsed = parseEntityDocument(doc, parseNetworkId(nid) ?? "x.example");
  if (!parsed.ok || parsed.problems.length > 0) return false;
  const e = parsed.entity;
  return [...e.properties, ...e.credentials, ...e.connections].every((entry) => entry.ok && entry.problems.length === 0);
}

const KIND_OF_FILE: Record<string, SchemaKind> = {
  "ident.json": "entity",
  "ident-property.json": "property",
  "ident-credential.json": "credential",
};

function sampleDocuments(): [string, SchemaKind, unknown][] {
  const out: [string, SchemaKind, unknown][] = [];
  for (const file of readdirSync(ROOT, { recursive: true, encoding: "utf8" })) {
    const kind = KIND_OF_FILE[path.basename(file)];
    if (!kind) continue;
    try {
      out.push([file, kind, JSON.parse(readFileSync(path.join(ROOT, file), "utf8")) as unknown]);
    } catch {
      // not JSON: nothing for a schema to say
    }
  }
  return out;
}

const entity = (extra: Record<string, unknown>) => ({ network_id: "§:entity:a.example", ...extra });
const property = (extra: Record<string, unknown>) => ({
  ident_property: { id: "§:property:a.example", ownership: [{ network_id: "§:entity:a.example" }], ...extra },
});
const credential = (extra: Record<string, unknown>, top: Record<string, unknown> = {}) => ({
  ident_entity_id: "§:entity:a.example",
  ident_credential: { title: "Member", ...extra },
  ...top,
});

/** Documents on each boundary: [name, kind, document, the answer both must give]. */
const MADE: [string, SchemaKind, unknown, boolean][] = [
  ["the minimal entity", "entity", entity({}), true],
  ["an upper-case prefix and domain", "entity", { network_id: "§:ENTITY:A.Example" }, true],
  ["no network_id", "entity", { details: {} }, false],
  ["a network_id without §", "entity", { network_id: "entity:a.example" }, false],
  ["a single-label domain", "entity", { network_id: "§:entity:localhost" }, false],
  ["a label of 64 characters", "entity", { network_id: `§:entity:${"a".repeat(64)}.example` }, false],
  ["a numeric top label", "entity", { network_id: "§:entity:a.c0m" }, false],
  ["a label starting with -", "entity", { network_id: "§:entity:-a.example" }, false],
  ["an unknown entity_type", "entity", entity({ entity_type: "robot" }), false],
  ["details not an object", "entity", entity({ details: "x" }), false],
  ["a number for a name", "entity", entity({ details: { name: 5 } }), false],
  ["unknown fields", "entity", entity({ extra: 1, details: { nickname: "x" } }), true],
  ["a property entry", "entity", entity({ properties: [{ id: "§:property:b.example", url: "https://b.example/" }] }), true],
  ["a property entry without §", "entity", entity({ properties: [{ id: "b.example" }] }), false],
  [
    "a property url that is javascript:",
    "entity",
    entity({ properties: [{ id: "§:property:b.example", url: "javascript:alert(1)" }] }),
    false,
  ],
  ["properties not an array", "entity", entity({ properties: {} }), false],
  ["a credential entry with a path", "entity", entity({ credentials: [{ id: "@a@b.example/members/x" }] }), true],
  ["a credential username ..", "entity", entity({ credentials: [{ id: "@..@b.example" }] }), false],
  ["a credential path segment ..", "entity", entity({ credentials: [{ id: "@a@b.example/../x" }] }), false],
  ["a credential with a bad issuer property", "entity", entity({ credentials: [{ id: "@a@b.example", property: { id: "b" } }] }), false],
  ["a connection without id", "entity", entity({ other_connections: [{ url: "https://x.example" }] }), false],
  [
    "1,001 connections",
    "entity",
    entity({ other_connections: Array.from({ length: 1001 }, (_, i) => ({ id: `https://x${i}.example` })) }),
    false,
  ],
  ["the minimal property document", "property", property({}), true],
  ["no ownership", "property", { ident_property: { id: "§:property:a.example" } }, false],
  ["an owner without network_id", "property", property({ ownership: [{ id: "§:entity:a.example" }] }), false],
  ["a property id of another kind", "property", property({ id: "§:entity:a.example" }), false],
  ["not under ident_property", "property", { id: "§:property:a.example", ownership: [] }, false],
  ["the minimal credential document", "credential", credential({}), true],
  ["a blank title", "credential", credential({ title: "  " }), false],
  ["no title", "credential", { ident_entity_id: "§:entity:a.example", ident_credential: {} }, false],
  ["an empty ident_entity_id", "credential", credential({}, { ident_entity_id: "" }), false],
  ["a profile_url that is not a URL", "credential", credential({ profile_url: "profile" }), false],
  ["a dataset of the wrong type", "credential", credential({ dataset: "x" }), false],
];

describe("the JSON Schemas and the resolver agree (docs/publishing.md#schemas)", () => {
  it("are draft 2020-12 with an $id under the public URL, and a description on every field", () => {
    for (const kind of SCHEMA_KINDS) {
      const schema = documentSchema(kind, "https://resolver.example");
      expect(schema).toMatchObject({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        $id: `https://resolver.example/schemas/${kind}.json`,
      });
      expect(JSON.stringify(schema)).toContain('"description"');
    }
  });

  it.each(sampleDocuments())("sample network %s (%s document)", (_, kind, doc) => {
    expect(validators[kind](doc), JSON.stringify(validators[kind].errors)).toBe(resolverAccepts(kind, doc));
  });

  it.each(MADE)("%s (%s document)", (_, kind, doc, expected) => {
    expect(resolverAccepts(kind, doc)).toBe(expected);
    expect(validators[kind](doc), JSON.stringify(validators[kind].errors)).toBe(expected);
  });

  it("the one rule a schema cannot state: an id repeated in another case is refused by the resolver only", () => {
    const doc = entity({ properties: [{ id: "§:property:b.example" }, { id: "§:property:B.example" }] });
    expect(validators.entity(doc)).toBe(true);
    expect(resolverAccepts("entity", doc)).toBe(false);
  });
});
