/**
 * `ident check <file>` (docs/publishing.md#check): a document checked before it is published, with
 * nothing fetched. It is told apart by its shape, read by the same parsers as every lookup, and for
 * each claim it makes the report says what the counterpart must publish for it to verify.
 */
import { parseCredentialDocument } from "../documents/credential.ts";
import { parseEntityDocument, type ParsedEntity } from "../documents/entity.ts";
import { isRecord, parseJson } from "../documents/json.ts";
import { parsePropertyDocument } from "../documents/property.ts";
import type { Problem } from "../documents/problem.ts";
import { parseCredentialId, parseNetworkId, parsePropertyId } from "../protocol/ids.ts";
import { credentialLocation, entityLocation, propertyLocation } from "../protocol/locations.ts";
import type { Settings } from "../present/explain.ts";
import { connectionUrl } from "../rules/connection.ts";
import { backlinkFix, claimEntryFix, credentialFix, propertyFix } from "./fixes.ts";
import { buildReport, explained, type CheckReport, type DocumentReport, type FileKind, type Finding } from "./report.ts";
import { extend } from "../objects.ts";

/** Where a check is: the file its report names, and the settings its findings are explained with. */
type Checking = { path: string; settings: Settings };

/** The report's target: the file, and which document it was found to be. */
const fileTarget = (at: Checking, document: FileKind | null) => ({ kind: "file" as const, path: at.path, document });

/** The file's own part of the report, as `role`. */
const fileReport = (at: Checking, role: DocumentReport["role"], findings: Finding[]): DocumentReport => ({
  role,
  domain: "",
  url: at.path,
  findings,
});

/** A document's problems as findings. */
const findingsOf = (problems: Problem[], at: Checking) => problems.map((p) => problemFinding(p, at.settings));

/** Checks a document's text; `path` names it in the report. */
export function checkText(text: string, path: string, settings: Settings): CheckReport {
  const at: Checking = { path, settings };
  const json = parseJson(text);
  if (!json.ok) {
    const finding = explained("error", "invalid_json", `${path} is not valid JSON (${json.message})`, settings);
    return buildReport(fileTarget(at, null), [fileReport(at, "file", [finding])]);
  }
  const value = json.value;
  const kind = kindOf(value);
  if (kind === null) {
    const message = isRecord(value)
      ? `${path} is none of the three documents: an entity document has network_id, a property document ident_property, a credential document ident_entity_id and ident_credential`
      : `${path} is not a JSON object, so it is none of the three documents`;
    return buildReport(fileTarget(at, null), [fileReport(at, "file", [explained("error", "unknown_document", message, settings)])]);
  }
  if (kind === "entity") return checkEntity(value, at);
  if (kind === "property") return checkProperty(value, at);
  return checkCredential(value, at);
}

/** An entity document's report: its findings and its entries', then what each claim's counterpart must publish. */
function checkEntity(value: unknown, at: Checking): CheckReport {
  const nid = isRecord(value) && typeof value.network_id === "string" ? value.network_id : "";
  // Offline, the domain it will be served from is the one it names (docs/decisions.md#validation [bind]).
  const domain = parseNetworkId(nid) ?? "";
  const parsed = parseEntityDocument(value, domain);
  const self = extend(fileReport(at, "entity", findingsOf(parsed.problems, at)), { domain });
  if (!parsed.ok) return buildReport(fileTarget(at, "entity"), [self]);
  const e = parsed.entity;
  // Each entry's own problems (V2): a malformed or repeated claim, a field ignored.
  for (const entry of [...e.properties, ...e.credentials, ...e.connections]) {
    self.findings.push(...entry.problems.map((p) => extend(problemFinding(p, at.settings), entry.id === null ? {} : { claim: entry.id })));
  }
  return buildReport(fileTarget(at, "entity"), [self, ...entityCounterparts(e, domain, self, at.settings)]);
}

/**
 * What the counterpart of each of an entity's claims must publish for it to verify: a property's
 * domain, a credential's issuer, a connection's page; a connection that is not checked is said in `self`.
 */
function entityCounterparts(e: ParsedEntity, domain: string, self: DocumentReport, settings: Settings): DocumentReport[] {
  const others: DocumentReport[] = [];
  for (const entry of e.properties) {
    if (!entry.ok) continue;
    const pd = parsePropertyId(entry.value.id);
    if (!pd) continue;
    const snippet = propertyFix(entry.value.id, e.network_id, entry.raw, undefined);
    const message = `For ${entry.value.id} to verify, ${pd} must serve a property document that names ${e.network_id} as an owner`;
    others.push(counterpart("property", pd, propertyLocation(pd).json, entry.value.id, message, snippet));
  }
  for (const entry of e.credentials) {
    if (!entry.ok) continue;
    const id = parseCredentialId(entry.value.id);
    if (!id) continue;
    const url = credentialLocation(id).json;
    const snippet = credentialFix(entry.value.id, e.network_id, entry.raw, undefined);
    const message = `For ${entry.value.id} to verify, ${id.domain} must serve a credential document at ${url} whose ident_entity_id is ${e.network_id}`;
    others.push(counterpart("credential", id.domain, url, entry.value.id, message, snippet));
  }
  for (const entry of e.connections) {
    if (!entry.ok || entry.id === null) continue;
    // The same test a lookup applies before it fetches the page (docs/decisions.md#verification).
    const url = connectionUrl(entry.id);
    if (!url) {
      const message = `${entry.id} is not an https: URL, so it is not checked`;
      self.findings.push(
        explained("error", "unsafe_url", message, settings, { claim: entry.id, path: `other_connections[${entry.index}].id` }),
      );
      continue;
    }
    const host = url.hostname;
    const message = `For ${entry.id} to verify, that page must link to https://${domain}/ with rel="me"`;
    others.push(counterpart("profile page", host, entry.id, entry.id, message, backlinkFix(domain)));
  }
  return others;
}

/** A property document's report: where to serve it, and what each owner must list. */
function checkProperty(value: unknown, at: Checking): CheckReport {
  const { settings } = at;
  const parsed = parsePropertyDocument(value);
  const self = fileReport(at, "property", findingsOf(parsed.problems, at));
  if (!parsed.ok) return buildReport(fileTarget(at, "property"), [self]);
  const p = parsed.doc.ident_property;
  const pd = parsePropertyId(p.id) ?? "";
  self.domain = pd;
  const others: DocumentReport[] = [];
  for (const owner of p.ownership) {
    const od = parseNetworkId(owner);
    if (!od) {
      self.findings.push(explained("error", "invalid_owner", `The owner ${owner} is not of the form §:entity:{domain}`, settings));
      continue;
    }
    const fields: Record<string, string> = {};
    if (p.name) fields.name = p.name;
    if (p.url) fields.url = p.url;
    const message = `For ${owner} to own ${p.id}, ${od} must list it in the properties of its entity document`;
    others.push(counterpart("entity", od, entityLocation(od).json, p.id, message, claimEntryFix("property", p.id, fields)));
  }
  self.findings.push(
    explained("publish", "served_at", `Serve this file at ${propertyLocation(pd).json} (or embed it in https://${pd}/)`, settings),
  );
  return buildReport(fileTarget(at, "property"), [self, ...others]);
}

/** A credential document's report: where to serve it, and what its holder must list. */
function checkCredential(value: unknown, at: Checking): CheckReport {
  const { settings } = at;
  const parsed = parseCredentialDocument(value);
  const self = fileReport(at, "credential", findingsOf(parsed.problems, at));
  if (!parsed.ok) return buildReport(fileTarget(at, "credential"), [self]);
  const doc = parsed.doc;
  const holder = parseNetworkId(doc.ident_entity_id);
  if (!holder) {
    self.findings.push(
      explained("error", "entity_mismatch", `ident_entity_id ${doc.ident_entity_id} is not of the form §:entity:{domain}`, settings, {
        path: "ident_entity_id",
      }),
    );
    return buildReport(fileTarget(at, "credential"), [self]);
  }
  const id = doc.ident_credential.id ? parseCredentialId(doc.ident_credential.id) : null;
  if (!id || !doc.ident_credential.id) {
    self.findings.push(
      explained(
        "warning",
        "credential_id_mismatch",
        "ident_credential.id is missing or not of the form @user@issuer[/path], so where this file must be served, and what the holder lists, cannot be said",
        settings,
        { path: "ident_credential.id", fix: "Set ident_credential.id to @{holder's username}@{your domain}[/{path}]." },
      ),
    );
    return buildReport(fileTarget(at, "credential"), [self]);
  }
  const cid = doc.ident_credential.id;
  self.domain = id.domain;
  self.findings.push(explained("publish", "served_at", `Serve this file at ${credentialLocation(id).json}`, settings));
  const message = `For ${cid} to verify, ${holder} must list it in the credentials of its entity document`;
  const entry = claimEntryFix("credential", cid, { title: doc.ident_credential.title });
  return buildReport(fileTarget(at, "credential"), [self, counterpart("entity", holder, entityLocation(holder).json, cid, message, entry)]);
}

/** What the document at `url` of `domain` must publish for `claim` to verify, as its part of the report. */
function counterpart(
  role: DocumentReport["role"],
  domain: string,
  url: string,
  claim: string,
  message: string,
  snippet: Finding["snippet"],
): DocumentReport {
  const finding: Finding = { severity: "publish", code: "counterpart", message, claim };
  if (snippet) finding.snippet = snippet;
  return { role, domain, url, findings: [finding] };
}

/** Which document a JSON value is, by its shape: the fields only that document has. */
export function kindOf(value: unknown): FileKind | null {
  if (!isRecord(value)) return null;
  if ("ident_property" in value) return "property";
  if ("ident_entity_id" in value || "ident_credential" in value) return "credential";
  if ("network_id" in value) return "entity";
  return null;
}

function problemFinding(p: Problem, settings: Settings): Finding {
  const extra: Partial<Finding> = p.path === undefined ? {} : { path: p.path };
  // The catalogue tells invalid_document from the claim's side; here the file itself is the document.
  if (p.code === "invalid_document")
    extra.means = "This document lacks a required field, or has one of the wrong form, so no claim can verify against it.";
  return explained(p.severity, p.code, p.message, settings, extra);
}
