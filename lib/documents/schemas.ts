/**
 * JSON Schemas (draft 2020-12) of the three documents, generated from the zod schemas the resolver
 * validates with, so they cannot drift (docs/publishing.md#schemas). Served at `/schemas/{kind}.json`.
 */
import { z } from "zod";
import { CredentialDocument } from "./credential.ts";
import { EntityDocument } from "./entity.ts";
import { PropertyDocument } from "./property.ts";

export const SCHEMA_KINDS = ["entity", "property", "credential"] as const;
export type SchemaKind = (typeof SCHEMA_KINDS)[number];

const SOURCES: Record<SchemaKind, { schema: z.ZodType; title: string; description: string }> = {
  entity: {
    schema: EntityDocument,
    title: "ident entity document",
    description:
      'Served at https://{domain}/ident.json (or embedded in the home page as <script type="application/json" id="ident-hub">): who the entity is, and which properties, credentials and profiles it claims.',
  },
  property: {
    schema: PropertyDocument,
    title: "ident property document",
    description:
      'Served at https://{domain}/ident-property.json (or embedded in the home page as id="ident-property"): the site and the entities that own it.',
  },
  credential: {
    schema: CredentialDocument,
    title: "ident credential document",
    description:
      "Served by the issuer at https://{issuer}[/{path}]/{username}/ident-credential.json: the credential and the network_id of its holder.",
  },
};

export const isSchemaKind = (value: string): value is SchemaKind => (SCHEMA_KINDS as readonly string[]).includes(value);

/** The JSON Schema of one document, its `$id` under `publicUrl`. */
export function documentSchema(kind: SchemaKind, publicUrl: string): Record<string, unknown> {
  const source = SOURCES[kind];
  const generated = z.toJSONSchema(source.schema, { target: "draft-2020-12", io: "input" });
  const { $schema, ...rest } = generated;
  return {
    $schema,
    $id: new URL(`/schemas/${kind}.json`, publicUrl).href,
    title: source.title,
    description: source.description,
    ...rest,
  };
}
