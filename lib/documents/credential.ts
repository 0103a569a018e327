/** The credential: an entry of an entity's `credentials[]`, and the credential document (docs/protocol.md#credential). */
import { z } from "zod";
import { extend } from "../objects.ts";
import { ID_PATTERNS, parseCredentialId } from "../protocol/ids.ts";
import { clipName } from "./display-limits.ts";
import { isRecord } from "./json.ts";
import { lenientFields, parsedOnce, type DocumentParse } from "./lenient.ts";
import { error, type Problem } from "./problem.ts";
import { Property, readProperty, URL_PATTERN } from "./property.ts";

export const CredentialId = z
  .string()
  .regex(new RegExp(ID_PATTERNS.credentialId, "u"))
  .refine((v) => parseCredentialId(v) !== null, "not @user@domain[/path]")
  .describe("The credential's id, @{username}@{issuer domain} or @{username}@{issuer domain}/{path}.");

export const Dataset = z.object({
  id: z.string().optional().describe("§:dataset:{domain}/{path}"),
  name: z.string().optional().describe("A human-readable name."),
});
export type Dataset = z.infer<typeof Dataset>;

export const Credential = z.object({
  id: z.string().optional().describe("The credential's id; should match where its document is served."),
  title: z.string().optional().describe("Shown on result pages, such as a membership or supporter title."),
  type: z.string().optional().describe("A free-form kind, such as Member, Employment or Certification."),
  description: z.string().optional().describe("What the credential attests to."),
  property: Property.optional().describe("The issuing site, so the issuer can be shown without another fetch."),
  dataset: Dataset.optional().describe("Groups credentials issued by the same property."),
  profile_url: z
    .string()
    .meta({ pattern: URL_PATTERN })
    .optional()
    .describe("The holder's profile on the issuer's site (an absolute https: URL)."),
});
export type Credential = z.infer<typeof Credential>;

/** An entry of an entity's `credentials[]`: its id is required (docs/protocol.md#v2-entries-stand-alone). */
export const CredentialEntry = Credential.extend({ id: CredentialId });
export type CredentialEntry = z.infer<typeof CredentialEntry>;

/** The credential document an issuer serves (docs/protocol.md#credential); V5's minimum is `ident_entity_id` and a title. */
export const CredentialDocument = z.object({
  ident_entity_id: z.string().min(1).describe("The holder's network_id: the back-link checked by V4."),
  ident_credential: Credential.extend({
    title: z
      .string()
      .regex(/\S/)
      .refine((t) => t.trim() !== "", "blank")
      .describe("The credential's title."),
  }),
});
export type CredentialDocument = z.infer<typeof CredentialDocument>;

const optional = {
  id: Credential.shape.id,
  title: Credential.shape.title,
  type: Credential.shape.type,
  description: Credential.shape.description,
  dataset: Credential.shape.dataset,
  profile_url: Credential.shape.profile_url,
};

/** How the credential's text is kept (docs/decisions.md#validation): the rest as names. */
const lengths = { id: "id", profile_url: "url", description: "description" } as const;

function readCredential(value: Record<string, unknown>, path: string, problems: Problem[]): Credential {
  const credential: Credential = lenientFields(value, optional, path, problems, lengths);
  if (credential.dataset && isRecord(value.dataset)) {
    credential.dataset = lenientFields(value.dataset, Dataset.shape, path ? `${path}.dataset` : "dataset", problems, { id: "id" });
  }
  if (value.property !== undefined) {
    const where = path ? `${path}.property` : "property";
    const sub: Problem[] = [];
    const property = readProperty(value.property, where, sub);
    // The nested issuer property only adds context (V5): a bad one is a warning, never a failure.
    problems.push(
      ...sub.map((p) => extend(p, { severity: "warning" as const, code: p.code === "invalid_entry" ? "invalid_field" : p.code })),
    );
    if (property) credential.property = property;
  }
  return credential;
}

/** One entry of `credentials[]`, or null when it has no credential id (V2). */
export function readCredentialEntry(raw: unknown, path: string, problems: Problem[]): CredentialEntry | null {
  if (!isRecord(raw)) {
    problems.push(error("invalid_entry", `${path} is not an object`, path));
    return null;
  }
  const id = CredentialId.safeParse(raw.id);
  if (!id.success) {
    problems.push(error("invalid_entry", `${path}.id is missing or not of the form @user@domain[/path]`, `${path}.id`));
    return null;
  }
  return extend(readCredential(raw, path, problems), { id: id.data });
}

function readCredentialDocument(value: unknown): DocumentParse<CredentialDocument> {
  if (!isRecord(value)) return { ok: false, problems: [error("invalid_document", "The credential document is not a JSON object")] };
  if (typeof value.ident_entity_id !== "string" || value.ident_entity_id === "") {
    return { ok: false, problems: [error("invalid_document", "The credential document has no ident_entity_id", "ident_entity_id")] };
  }
  if (!isRecord(value.ident_credential)) {
    return {
      ok: false,
      problems: [error("invalid_document", "The credential document has no ident_credential object", "ident_credential")],
    };
  }
  const title = value.ident_credential.title;
  if (typeof title !== "string" || title.trim() === "") {
    return { ok: false, problems: [error("invalid_document", "ident_credential has no title", "ident_credential.title")] };
  }
  const problems: Problem[] = [];
  const credential = readCredential(value.ident_credential, "ident_credential", problems);
  return {
    ok: true,
    doc: { ident_entity_id: value.ident_entity_id, ident_credential: extend(credential, { title: clipName(title) }) },
    problems,
  };
}

const parses = parsedOnce((value) => readCredentialDocument(value));

/** Reads a credential document: `ident_entity_id` and `ident_credential.title` are required (V5); the rest adds context. */
export function parseCredentialDocument(value: unknown): DocumentParse<CredentialDocument> {
  return parses(value, "");
}
