/**
 * Property and credential queries (docs/decisions.md#queries): the counterpart document first, then
 * the entity of every owner or of the holder, each with the claim the query is about in `focus`.
 */
import { keptJson } from "../documents/display-limits.ts";
import { parseCredentialDocument } from "../documents/credential.ts";
import type { DocumentParse } from "../documents/lenient.ts";
import { error, warning, withDetail, type Problem } from "../documents/problem.ts";
import { parsePropertyDocument } from "../documents/property.ts";
import type { Limits } from "../limits.ts";
import { extend } from "../objects.ts";
import { idKey, parseNetworkId, sameId, type Query } from "../protocol/ids.ts";
import { credentialLocation, propertyLocation, type DocumentLocation } from "../protocol/locations.ts";
import type { Reason } from "../protocol/reasons.ts";
import { SCHEMA_ID, type Claim, type EntityResult, type SearchResponse, type Source } from "../result/record.ts";
import { isAbout } from "../rules/property.ts";
import { isRefusal, type FetchRefusal } from "../traffic/refusal.ts";
import { LABEL, type FetchDocument, type ResolveOptions } from "./documents.ts";

export function publicQuery(query: Query): SearchResponse["query"] {
  return { input: query.input, kind: query.kind, domain: query.domain };
}

/** The claim about `id` in a resolved entity, or why the owner or holder does not make it. */
function focusOn(
  result: EntityResult,
  list: "properties" | "credentials",
  id: string,
  fallback: Omit<Claim, "verified" | "problems">,
  what: string,
): Claim {
  const found = result[list].find((c) => c.id !== null && sameId(c.id, id));
  if (found) return found;
  const reason: Reason =
    result.entity.status === "accepted" ? "not_claimed" : result.entity.status === "rejected" ? "invalid_document" : result.entity.status;
  const message =
    reason === "not_claimed"
      ? `${result.entity.domain}'s entity document does not list ${id} among its ${list}; ${what}`
      : `${result.entity.domain}'s entity document could not be used (${result.entity.status}), so the claim cannot be confirmed`;
  return extend(fallback, { verified: false, reason, problems: [error(reason, message)] });
}

type Counterpart<T> = { doc: T; value: unknown; source: Source; problems: Problem[] };

/** What the queries read through: the document fetcher, the entity resolution and the limits. */
type QueryDeps = {
  fetchDocument: FetchDocument;
  resolveEntity: (domain: string, opts: ResolveOptions) => Promise<EntityResult | FetchRefusal>;
  limits: Limits;
};

export function createQueries(
  fetchDocument: FetchDocument,
  resolveEntity: (domain: string, opts: ResolveOptions) => Promise<EntityResult | FetchRefusal>,
  limits: Limits,
) {
  const deps: QueryDeps = { fetchDocument, resolveEntity, limits };
  return {
    /** A property ID: every owner its document names, each verifying on its own (V3). */
    resolvePropertyQuery: (query: Query & { kind: "property_id" }, opts: ResolveOptions) => resolvePropertyQuery(deps, query, opts),
    /** A credential ID: its holder, verifying only when the holder's document references it (V4). */
    resolveCredentialQuery: (query: Query & { kind: "credential_id" }, opts: ResolveOptions) => resolveCredentialQuery(deps, query, opts),
  };
}

/** The document a query starts from, valid; or null, with the reason added to the response's problems; or its refusal. */
async function counterpart<T>(
  fetchDocument: FetchDocument,
  loc: DocumentLocation,
  parse: (value: unknown) => DocumentParse<T>,
  response: SearchResponse,
  opts: ResolveOptions,
): Promise<Counterpart<T> | FetchRefusal | null> {
  const fetched = await fetchDocument(loc, opts);
  if (isRefusal(fetched)) return fetched;
  if (!fetched.ok) {
    response.problems.push(withDetail(error(fetched.status, fetched.message), fetched.detail));
    return null;
  }
  const json = fetched.json;
  const parsed = json.ok ? parse(json.value) : null;
  if (!json.ok || !parsed?.ok) {
    const why = !json.ok ? `not valid JSON (${json.message})` : (parsed?.problems.map((p) => p.message).join("; ") ?? "");
    response.problems.push(invalid(loc, fetched.source, why));
    return null;
  }
  return { doc: parsed.doc, value: json.value, source: fetched.source, problems: [...fetched.problems, ...parsed.problems] };
}

/** The problem of a counterpart document that is not valid, and why. */
const invalid = (loc: DocumentLocation, source: Source, why: string) =>
  error("invalid_document", `The ${LABEL[loc.kind]} at ${source.url} is not valid: ${why}`);
/** A response to `query` with nothing in it yet. */
const empty = (query: Query): SearchResponse => ({ schema: SCHEMA_ID, query: publicQuery(query), results: [], problems: [] });

/** A property ID: every owner its document names, each verifying on its own (V3). */
async function resolvePropertyQuery(
  deps: QueryDeps,
  query: Query & { kind: "property_id" },
  opts: ResolveOptions,
): Promise<SearchResponse | FetchRefusal> {
  const id = query.id;
  const response = empty(query);
  const found = await counterpart(deps.fetchDocument, propertyLocation(query.domain), parsePropertyDocument, response, opts);
  if (!found || isRefusal(found)) return found ?? response;
  const property = found.doc.ident_property;
  if (!isAbout(property.id, id)) {
    response.problems.push(error("id_mismatch", `${query.domain}'s property document is about ${property.id}, not ${id}`));
    return response;
  }
  response.problems.push(...found.problems);
  const owners = distinctOwners(property.ownership, response);
  const maxClaims = deps.limits.maxClaims;
  if (owners.length > maxClaims) {
    response.problems.push(warning("limit", `ownership lists ${owners.length} owners; only the first ${maxClaims} are checked`));
  }
  // docs/architecture.md#traffic: an owner this resolver declined to fetch is named, not dropped.
  const notChecked: { domain: string; why: string }[] = [];
  const results = await Promise.all(owners.slice(0, maxClaims).map((owner) => checkOwner(deps, owner, id, found, notChecked, opts)));
  response.results = results.filter((r): r is EntityResult => r !== null);
  if (notChecked.length > 0) response.problems.push(notCheckedWarning(notChecked));
  return response;
}

/** The owners a property document names, each once; those that are not network_ids are warned of in the response. */
function distinctOwners(ownership: string[], response: SearchResponse): { owner: string; domain: string }[] {
  const owners: { owner: string; domain: string }[] = [];
  const seen = new Set<string>();
  const invalidOwners: string[] = [];
  for (const owner of ownership) {
    const domain = parseNetworkId(owner);
    if (domain === null) invalidOwners.push(owner);
    else if (!seen.has(idKey(owner))) {
      seen.add(idKey(owner));
      owners.push({ owner, domain });
    }
  }
  if (invalidOwners.length > 0) {
    const shown = invalidOwners
      .slice(0, 5)
      .map((o) => JSON.stringify(o.slice(0, 100)))
      .join(", ");
    response.problems.push(
      warning(
        "invalid_owner",
        `ownership lists ${invalidOwners.length} value(s) that are not network_ids: ${shown}${invalidOwners.length > 5 ? ", …" : ""}`,
      ),
    );
  }
  return owners;
}

/**
 * Resolves one owner, with the property's claim in `focus`; null when its lookup was refused, which
 * is noted in the query's work and in `notChecked`.
 */
async function checkOwner(
  deps: QueryDeps,
  { owner, domain }: { owner: string; domain: string },
  id: string,
  found: Counterpart<unknown>,
  notChecked: { domain: string; why: string }[],
  opts: ResolveOptions,
): Promise<EntityResult | null> {
  const result = await deps.resolveEntity(domain, opts);
  if (isRefusal(result)) {
    opts.work?.refused.push(result.refused);
    notChecked.push({ domain, why: result.message });
    return null;
  }
  const fallback = { id, claimed: keptJson(owner), document: keptJson(found.value), source: found.source };
  result.focus = focusOn(result, "properties", id, fallback, `an owner verifies only when its own document lists the property (V3)`);
  return result;
}

/** The warning that names the owners not checked (the first few) and why the first was not. */
function notCheckedWarning(notChecked: { domain: string; why: string }[]): Problem {
  const shown = notChecked
    .slice(0, 5)
    .map((n) => n.domain)
    .join(", ");
  const message = `${notChecked.length} owner(s) were not checked (${shown}${notChecked.length > 5 ? ", …" : ""}): ${notChecked[0]?.why ?? ""}`;
  return warning("limit", message);
}

/** A credential ID: its holder, verifying only when the holder's document references it (V4). */
async function resolveCredentialQuery(
  deps: QueryDeps,
  query: Query & { kind: "credential_id" },
  opts: ResolveOptions,
): Promise<SearchResponse | FetchRefusal> {
  const id = query.id;
  const response = empty(query);
  const loc = credentialLocation(query.credential);
  const found = await counterpart(deps.fetchDocument, loc, parseCredentialDocument, response, opts);
  if (!found || isRefusal(found)) return found ?? response;
  const holder = parseNetworkId(found.doc.ident_entity_id);
  if (holder === null) {
    response.problems.push(invalid(loc, found.source, "its ident_entity_id is not a network_id"));
    return response;
  }
  response.problems.push(...found.problems);
  const result = await deps.resolveEntity(holder, opts);
  if (isRefusal(result)) return result;
  const fallback = { id, claimed: keptJson(found.doc.ident_entity_id), document: keptJson(found.value), source: found.source };
  result.focus = focusOn(result, "credentials", id, fallback, "a credential verifies only when the holder's document references it (V4)");
  response.results = [result];
  return response;
}
