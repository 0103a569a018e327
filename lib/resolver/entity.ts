/**
 * Resolving one entity: its document (V1, docs/decisions.md#validation), then every claim at once,
 * returned as soon as the document is in so a page can show the entity while the claims stream in.
 */
import { parseCredentialDocument } from "../documents/credential.ts";
import { keptId } from "../documents/display-limits.ts";
import { parseEntityDocument, type ParsedEntity } from "../documents/entity.ts";
import { isRecord } from "../documents/json.ts";
import { error, withDetail, type Problem } from "../documents/problem.ts";
import { parsePropertyDocument } from "../documents/property.ts";
import type { Limits } from "../limits.ts";
import { parseCredentialId, sameId } from "../protocol/ids.ts";
import { entityLocation } from "../protocol/locations.ts";
import { buildJsonLd, type JsonLdInput } from "../result/jsonld.ts";
import type { Claim, EntityResult } from "../result/record.ts";
import type { Entry } from "../documents/lenient.ts";
import { checkEntries, type CheckedClaim, type ClaimChecks, type ClaimSlot } from "./claims.ts";
import type { FetchDocument, ResolveOptions } from "./documents.ts";
import { isRefusal, type FetchRefusal } from "../traffic/refusal.ts";

/** An entity whose document is in and whose claims are still being checked. */
export type StagedEntity = {
  entity: EntityResult["entity"];
  cache: EntityResult["cache"];
  properties: ClaimSlot[];
  credentials: ClaimSlot[];
  connections: ClaimSlot[];
  /** The whole result, JSON-LD included, once every claim is settled. */
  result: Promise<EntityResult>;
};

const iso = (ms: number) => new Date(ms).toISOString();

export function createEntityResolution(fetchDocument: FetchDocument, checks: ClaimChecks, limits: Limits) {
  /** The entity of `domainInput`, staged; the refusal when its own document could not be fetched now. */
  return async function resolveEntityStaged(domainInput: string, opts: ResolveOptions = {}): Promise<StagedEntity | FetchRefusal> {
    const domain = domainInput.toLowerCase();
    const fetched = await fetchDocument(entityLocation(domain), opts);
    if (isRefusal(fetched)) return fetched;
    const cacheInfo = { fetched_at: iso(fetched.fetchedAt), stale: fetched.stale };
    const read = readEntity(domain, fetched, cacheInfo);
    return "doc" in read ? stageClaims({ checks, limits, opts }, domain, read, cacheInfo) : read;
  };
}

type Fetched = Exclude<Awaited<ReturnType<FetchDocument>>, FetchRefusal>;
type CacheInfo = StagedEntity["cache"];

/** An entity whose document settles it at once (not found, not valid): no claim to check. */
function settled(entity: EntityResult["entity"], cacheInfo: CacheInfo): StagedEntity {
  const result: EntityResult = { entity, properties: [], credentials: [], connections: [], jsonld: null, cache: cacheInfo };
  return { entity, cache: cacheInfo, properties: [], credentials: [], connections: [], result: Promise.resolve(result) };
}

/** The entity document read (V1, V2: docs/decisions.md#validation): accepted with its parse, or settled as failed or rejected. */
function readEntity(
  domain: string,
  fetched: Fetched,
  cacheInfo: CacheInfo,
): { entity: EntityResult["entity"]; doc: ParsedEntity } | StagedEntity {
  if (!fetched.ok)
    return settled(
      { status: fetched.status, domain, problems: [withDetail(error(fetched.status, fetched.message), fetched.detail)] },
      cacheInfo,
    );
  const rejected = (problems: Problem[], networkId?: unknown): StagedEntity =>
    settled(
      {
        status: "rejected",
        domain,
        // A network_id that is not one is kept to an id's length (docs/decisions.md#validation).
        ...(typeof networkId === "string" ? { network_id: keptId(networkId) } : {}),
        source: fetched.source,
        problems: [...fetched.problems, ...problems],
      },
      cacheInfo,
    );
  const json = fetched.json;
  if (!json.ok)
    return rejected([error("invalid_json", `The entity document at ${fetched.source.url} is not valid JSON (${json.message})`)]);
  const parsed = parseEntityDocument(json.value, domain);
  if (!parsed.ok) return rejected(parsed.problems, isRecord(json.value) ? json.value.network_id : undefined);
  const doc = parsed.entity;
  const entity: EntityResult["entity"] = {
    status: "accepted",
    domain,
    network_id: doc.network_id,
    ...(doc.entity_type !== undefined ? { entity_type: doc.entity_type } : {}),
    details: Object.fromEntries(Object.entries(doc.details).filter((kv): kv is [string, string] => typeof kv[1] === "string")),
    source: fetched.source,
    problems: [...fetched.problems, ...parsed.problems],
  };
  return { entity, doc };
}

/** An accepted entity's claims, each checked in its slot within its list's budget; the whole result once all are settled. */
function stageClaims(
  c: { checks: ClaimChecks; limits: Limits; opts: ResolveOptions },
  domain: string,
  read: { entity: EntityResult["entity"]; doc: ParsedEntity },
  cacheInfo: CacheInfo,
): StagedEntity {
  const { checks, limits, opts } = c;
  const { entity, doc } = read;
  // Each list within its budget; work refused on the way is noted in this query's `work`.
  const check = <T>(
    entries: Entry<T>[],
    budget: number,
    noun: string,
    one: (e: Entry<T> & { ok: true }) => Promise<CheckedClaim | FetchRefusal>,
  ) => checkEntries(entries, budget, noun, one, opts);
  const properties = check(doc.properties, limits.maxClaims, "properties", (e) => checks.checkProperty(doc, e, opts));
  const credentials = check(doc.credentials, limits.maxClaims, "credentials", (e) => checks.checkCredential(doc, e, opts));
  const connections = check(doc.connections, limits.maxConnections, "connections", (e) => checks.checkConnection(domain, e, opts));
  const all = (slots: ClaimSlot[]) => Promise.all(slots.map((s) => s.result));
  const result = Promise.all([all(properties), all(credentials), all(connections)]).then(([p, cr, n]) => {
    const full: EntityResult = {
      entity,
      properties: p.map((r) => r.claim),
      credentials: cr.map((r) => r.claim),
      connections: n.map((r) => r.claim),
      jsonld: null,
      cache: { fetched_at: cacheInfo.fetched_at, stale: cacheInfo.stale || [...p, ...cr, ...n].some((r) => r.stale) },
    };
    full.jsonld = buildJsonLd(jsonLdInput(domain, doc, full)) as Record<string, unknown>;
    return full;
  });
  return { entity, cache: cacheInfo, properties, credentials, connections, result };
}

/** The JSON-LD input of an accepted entity: only its verified claims (docs/decisions.md#json-ld). */
function jsonLdInput(domain: string, entity: ParsedEntity, result: EntityResult): JsonLdInput {
  const verified = (claims: Claim[]) => claims.filter((c) => c.verified);
  // Verified claims' documents were parsed before; parsing is remembered per document, and needs no cast.
  const propertyUrls = verified(result.properties).flatMap((c) => {
    const doc = parsePropertyDocument(c.document);
    const entry = entity.properties.find((e) => e.ok && c.id !== null && sameId(e.value.id, c.id));
    const url = (doc.ok ? doc.doc.ident_property.url : undefined) ?? (entry?.ok ? entry.value.url : undefined);
    return url !== undefined ? [url] : [];
  });
  const connectionUrls = verified(result.connections).flatMap((c) => (c.id ? [c.id] : []));
  const credentials = verified(result.credentials).flatMap((c) => {
    const parsed = parseCredentialDocument(c.document);
    const issuer = c.id !== null ? parseCredentialId(c.id) : null;
    if (!parsed.ok || !issuer) return [];
    const doc = parsed.doc.ident_credential;
    const issuerDomain = issuer.domain.toLowerCase();
    return [
      {
        title: doc.title,
        ...(doc.type !== undefined ? { type: doc.type } : {}),
        ...(doc.profile_url !== undefined ? { url: doc.profile_url } : {}),
        issuerName: doc.property?.name ?? issuerDomain,
        issuerDomain,
      },
    ];
  });
  return {
    domain,
    network_id: entity.network_id,
    ...(entity.entity_type !== undefined ? { entity_type: entity.entity_type } : {}),
    details: entity.details,
    propertyUrls,
    connectionUrls,
    credentials,
  };
}
