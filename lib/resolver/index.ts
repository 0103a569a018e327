import { createDocumentCache, type DocumentCache } from "../fetch/cache";
import type { FailureStatus, Fetcher, FetchMode, FetchOutcome } from "../fetch/fetcher";
import { createHostLimiter } from "../fetch/host-limit";
import { extractEmbed } from "../documents/embed";
import { idKey, parseCredentialId, parseNetworkId, parsePropertyId, parseQuery, sameId, type Query } from "../protocol/ids";
import { buildJsonLd, type JsonLdInput } from "../result/jsonld";
import { credentialLocation, entityLocation, propertyLocation, type DocumentLocation } from "../protocol/locations";
import { SCHEMA_ID, type Claim, type EntityResult, type SearchResponse, type Source } from "../result/record";
import {
  error,
  parseCredentialDocument,
  parseEntityDocument,
  parseJson,
  type JsonParse,
  parsePropertyDocument,
  warning,
  type Credential,
  type CredentialDocument,
  type DocumentParse,
  type EntityDocument,
  type Entry,
  type Problem,
  type Property,
  type PropertyDocument,
} from "../documents/schemas";
import { connectionUrl, verifyConnection, verifyCredential, verifyProperty, type Reason, type Verdict } from "../rules/verify";

/** Per-resolution budget (SPEC §3 [bind]). */
export type Limits = {
  /** Properties checked per entity, and credentials checked per entity (`IDENT_MAX_CLAIMS`). @default 50 */
  maxClaims: number;
  /** Connections checked per entity (`IDENT_MAX_CONNECTIONS`). @default 10 */
  maxConnections: number;
  /** Fetches to one host at a time. @default 6 */
  perHost: number;
};

export const DEFAULT_LIMITS: Limits = { maxClaims: 50, maxConnections: 10, perHost: 6 };

export type ResolverDeps = {
  /** The guarded fetcher; tests hand in a fake. */
  fetch: Fetcher;
  /** @default a new {@link createDocumentCache} using `now` */
  cache?: DocumentCache;
  /** Clock, in ms. @default Date.now */
  now?: () => number;
  limits?: Partial<Limits>;
};

export type ResolveOptions = { refresh?: boolean };

export type SearchOutcome =
  | { ok: true; response: SearchResponse }
  | { ok: false; error: { code: "invalid_query"; message: string } };

export type Resolver = {
  /** Parses a query (SPEC §8) and resolves it. A bad query is a value, not an exception. */
  search(input: string, options?: ResolveOptions): Promise<SearchOutcome>;
  /** Resolves an already parsed query. */
  resolve(query: Query, options?: ResolveOptions): Promise<SearchResponse>;
  /** Resolves the entity of one domain with all its claims. */
  resolveEntity(domain: string, options?: ResolveOptions): Promise<EntityResult>;
  /** The same, returned as soon as the entity document is in, with one promise per claim (for streaming). */
  resolveEntityStaged(domain: string, options?: ResolveOptions): Promise<StagedEntity>;
};

/** One claim being checked: what was published now, the verdict later. */
export type ClaimSlot = { id: string | null; claimed: unknown; result: Promise<CheckedClaim> };
export type CheckedClaim = { claim: Claim; stale: boolean };

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

/** A document fetched with its fallback (V7): its text parsed as JSON and where it came from, or why not. */
type DocFetch =
  | { ok: true; json: JsonParse; source: Source; problems: Problem[]; fetchedAt: number; stale: boolean }
  | { ok: false; status: FailureStatus; message: string; fetchedAt: number; stale: boolean };

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

const LABEL: Record<DocumentLocation["kind"], string> = {
  entity: "entity document",
  property: "property document",
  credential: "credential document",
};

/** Plain words for a failed fetch. */
function failureMessage(loc: DocumentLocation, json: FetchOutcome, page?: FetchOutcome): string {
  const what = `${new URL(loc.json).host}'s ${LABEL[loc.kind]}`;
  if (json.ok) return `${what} was found`;
  switch (json.status) {
    case "not_found":
      if (page && !page.ok && page.status !== "not_found") {
        return `${what} is not at ${loc.json} (${json.message}), and the page ${loc.page} for the embedded fallback failed: ${page.message}`;
      }
      return `${what} is not at ${loc.json} (${json.message}), and ${loc.page} has no <script type="application/json" id="${loc.elementId}"> fallback`;
    case "timeout":
      return `${what} at ${loc.json} did not arrive in time: ${json.message}`;
    case "unreachable":
      return `${what} at ${loc.json} could not be reached: ${json.message}`;
    case "too_large":
      return `${what} at ${loc.json} is too large: ${json.message}`;
    case "blocked":
      return `${what} at ${loc.json} was not fetched because it leads somewhere the resolver does not go: ${json.message}`;
  }
}

function toSource(outcome: FetchOutcome & { ok: true }, via: Source["via"], bytes = outcome.bytes): Source {
  return { url: outcome.finalUrl, via, http_status: outcome.httpStatus, content_type: outcome.contentType, bytes, ms: outcome.ms };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The resolver (STYLE: built from its dependencies). Only `fetch` does I/O; parsing and verification
 * are pure functions of the documents fetched.
 */
export function createResolver(deps: ResolverDeps): Resolver {
  const now = deps.now ?? Date.now;
  const limits: Limits = { ...DEFAULT_LIMITS, ...deps.limits };
  const cache = deps.cache ?? createDocumentCache({ now });
  const perHost = createHostLimiter(limits.perHost);

  function load(url: string, mode: FetchMode, opts: ResolveOptions) {
    const host = new URL(url).host;
    return cache.get(url, mode, () => perHost(host, () => deps.fetch(url, mode)), opts);
  }

  // A cached outcome never changes (SPEC §9), so its body, or one embed in it, is parsed once: a warm
  // page does not parse and validate every document again on each request.
  const parsed = new WeakMap<FetchOutcome, Map<string, { json: JsonParse; bytes: number } | null>>();
  function parseOnce(outcome: FetchOutcome & { ok: true }, embedId: string | null) {
    let parts = parsed.get(outcome);
    if (!parts) parsed.set(outcome, (parts = new Map()));
    const part = embedId ?? "";
    let hit = parts.get(part);
    if (hit === undefined) {
      const text = embedId === null ? outcome.body : extractEmbed(outcome.body, embedId);
      hit = text === null ? null : { json: parseJson(text), bytes: embedId === null ? outcome.bytes : Buffer.byteLength(text) };
      parts.set(part, hit);
    }
    return hit;
  }

  /** rel=me links of a cached page, read once per outcome and domain, like documents. */
  const connectionVerdicts = new WeakMap<FetchOutcome, { domain: string; verdict: Verdict }>();
  function connectionVerdict(domain: string, outcome: FetchOutcome & { ok: true }): Verdict {
    const hit = connectionVerdicts.get(outcome);
    if (hit?.domain === domain) return hit.verdict;
    const verdict = verifyConnection(domain, outcome.finalUrl, outcome.body);
    connectionVerdicts.set(outcome, { domain, verdict });
    return verdict;
  }

  /** Fetches a document; on `not_found`, and only then, its HTML embed (V7, SPEC §3). */
  async function fetchDocument(loc: DocumentLocation, opts: ResolveOptions): Promise<DocFetch> {
    const json = await load(loc.json, "json", opts);
    if (json.outcome.ok) {
      const problems: Problem[] = [];
      const type = json.outcome.contentType;
      if (!type || !JSON_TYPE.test(type)) {
        problems.push(warning("content_type", `${loc.json} was served as ${type ?? "no Content-Type"}, not application/json; parsed all the same`));
      }
      const doc = must(parseOnce(json.outcome, null), "a body is always text");
      return { ok: true, json: doc.json, source: toSource(json.outcome, "json"), problems, fetchedAt: json.fetchedAt, stale: json.stale };
    }
    if (json.outcome.status !== "not_found") {
      return { ok: false, status: json.outcome.status, message: failureMessage(loc, json.outcome), fetchedAt: json.fetchedAt, stale: json.stale };
    }
    const page = await load(loc.page, "html", opts);
    const stale = json.stale || page.stale;
    const fetchedAt = Math.min(json.fetchedAt, page.fetchedAt);
    if (page.outcome.ok) {
      const embed = parseOnce(page.outcome, loc.elementId);
      if (embed !== null) {
        return { ok: true, json: embed.json, source: toSource(page.outcome, "embed", embed.bytes), problems: [], fetchedAt, stale };
      }
    }
    const status = !page.outcome.ok && page.outcome.status !== "not_found" ? page.outcome.status : "not_found";
    return { ok: false, status, message: failureMessage(loc, json.outcome, page.outcome), fetchedAt, stale };
  }

  type Checked<T = unknown> = { verdict: Verdict; document?: unknown; parsed?: T; source?: Source; problems: Problem[]; stale: boolean };

  /** Fetches and parses a counterpart document, then applies `rule` to it. */
  async function checkDocument<T>(
    loc: DocumentLocation,
    parse: (value: unknown) => DocumentParse<T>,
    rule: (doc: T) => Verdict,
    opts: ResolveOptions,
  ): Promise<Checked<T>> {
    const fetched = await fetchDocument(loc, opts);
    if (!fetched.ok) return { verdict: { verified: false, reason: fetched.status, message: fetched.message }, problems: [], stale: fetched.stale };
    const base = { source: fetched.source, stale: fetched.stale };
    const json = fetched.json;
    if (!json.ok) {
      const message = `The ${LABEL[loc.kind]} at ${fetched.source.url} is not valid JSON (${json.message})`;
      return { ...base, verdict: { verified: false, reason: "invalid_document", message }, problems: fetched.problems };
    }
    const parsed = parse(json.value);
    if (!parsed.ok) {
      const message = `The ${LABEL[loc.kind]} at ${fetched.source.url} is not valid: ${parsed.problems.map((p) => p.message).join("; ")}`;
      return { ...base, document: json.value, verdict: { verified: false, reason: "invalid_document", message }, problems: fetched.problems };
    }
    return { ...base, document: json.value, parsed: parsed.doc, verdict: rule(parsed.doc), problems: [...fetched.problems, ...parsed.problems] };
  }

  function toClaim(id: string | null, claimed: unknown, checked: Checked, entryProblems: Problem[]): Claim {
    const problems = [...entryProblems, ...checked.problems];
    const claim: Claim = { id, verified: checked.verdict.verified, claimed, problems };
    if (!checked.verdict.verified) {
      claim.reason = checked.verdict.reason;
      problems.push(error(checked.verdict.reason, checked.verdict.message));
    }
    if (checked.document !== undefined) claim.document = checked.document;
    if (checked.source) claim.source = checked.source;
    return claim;
  }

  const failedClaim = (id: string | null, claimed: unknown, reason: Reason, message: string, problems: Problem[] = []): Claim => ({
    id,
    verified: false,
    reason,
    claimed,
    problems: [...problems, error(reason, message)],
  });

  /** Runs `check` on each valid entry up to the budget; bad, repeated and over-budget entries fail without a fetch (V2). */
  /** Starts `check` on each valid entry up to the budget, all at once; bad, repeated and over-budget entries fail without a fetch (V2). */
  function checkEntries<T>(
    entries: Entry<T>[],
    budget: number,
    noun: string,
    check: (entry: Entry<T> & { ok: true }) => Promise<CheckedClaim>,
  ): ClaimSlot[] {
    let used = 0;
    return entries.map((entry): ClaimSlot => {
      const slot = (result: CheckedClaim | Promise<CheckedClaim>) => ({ id: entry.id, claimed: entry.raw, result: Promise.resolve(result) });
      if (!entry.ok) {
        const message = entry.problems.map((p) => p.message).join("; ");
        return slot({ claim: failedClaim(entry.id, entry.raw, entry.reason, message, entry.problems.filter((p) => p.code !== entry.reason)), stale: false });
      }
      if (++used > budget) {
        const message = `Only the first ${budget} ${noun} of an entity are checked; this one was not fetched`;
        return slot({ claim: failedClaim(entry.id, entry.raw, "limit", message, entry.problems), stale: false });
      }
      return slot(check(entry));
    });
  }

  function checkProperty(entity: EntityDocument, entry: Entry<Property> & { ok: true }, opts: ResolveOptions) {
    const domain = must(parsePropertyId(entry.value.id), "a valid entry has a property id");
    return checkDocument(propertyLocation(domain), parsePropertyDocument, (doc: PropertyDocument) => verifyProperty(entity.network_id, entry.value.id, doc, domain), opts).then(
      (checked) => ({ claim: toClaim(entry.id, entry.raw, checked, entry.problems), stale: checked.stale }),
    );
  }

  function checkCredential(entity: EntityDocument, entry: Entry<Credential & { id: string }> & { ok: true }, opts: ResolveOptions) {
    const id = must(parseCredentialId(entry.value.id), "a valid entry has a credential id");
    const rule = (doc: CredentialDocument): Verdict => verifyCredential(entity.network_id, doc, id.domain);
    return checkDocument(credentialLocation(id), parseCredentialDocument, rule, opts).then((checked) => {
      const publishedId = checked.parsed?.ident_credential.id;
      if (checked.verdict.verified && publishedId !== undefined && !sameId(publishedId, entry.value.id)) {
        checked.problems.push(
          warning("credential_id_mismatch", `${id.domain}'s credential document carries the id ${publishedId}, not ${entry.value.id}`, "ident_credential.id"),
        );
      }
      return { claim: toClaim(entry.id, entry.raw, checked, entry.problems), stale: checked.stale };
    });
  }

  async function checkConnection(domain: string, entry: Entry<{ id: string }> & { ok: true }, opts: ResolveOptions) {
    const url = connectionUrl(entry.value.id);
    if (!url) {
      const message = `${entry.value.id} is not an https: URL, so it is not checked`;
      return { claim: failedClaim(entry.id, entry.raw, "unsafe_url", message, entry.problems), stale: false };
    }
    const page = await load(url.href, "html", opts);
    const outcome = page.outcome;
    const checked: Checked = outcome.ok
      ? { verdict: connectionVerdict(domain, outcome), source: toSource(outcome, "json"), problems: [], stale: page.stale }
      : { verdict: { verified: false, reason: outcome.status, message: `The page ${url.href} could not be checked: ${outcome.message}` }, problems: [], stale: page.stale };
    return { claim: toClaim(entry.id, entry.raw, checked, entry.problems), stale: checked.stale };
  }

  /**
   * Resolves the entity document of a domain and starts every claim check; returns as soon as the
   * entity document is in, so a page can show the entity while the claims stream in.
   */
  async function resolveEntityStaged(domainInput: string, opts: ResolveOptions = {}): Promise<StagedEntity> {
    const domain = domainInput.toLowerCase();
    const fetched = await fetchDocument(entityLocation(domain), opts);
    const cacheInfo = { fetched_at: iso(fetched.fetchedAt), stale: fetched.stale };
    const settled = (entity: EntityResult["entity"]): StagedEntity => {
      const result: EntityResult = { entity, properties: [], credentials: [], connections: [], jsonld: null, cache: cacheInfo };
      return { entity, cache: cacheInfo, properties: [], credentials: [], connections: [], result: Promise.resolve(result) };
    };
    if (!fetched.ok) return settled({ status: fetched.status, domain, problems: [error(fetched.status, fetched.message)] });
    const rejected = (problems: Problem[], networkId?: unknown): StagedEntity =>
      settled({
        status: "rejected",
        domain,
        ...(typeof networkId === "string" ? { network_id: networkId } : {}),
        source: fetched.source,
        problems: [...fetched.problems, ...problems],
      });
    const json = fetched.json;
    if (!json.ok) return rejected([error("invalid_json", `The entity document at ${fetched.source.url} is not valid JSON (${json.message})`)]);
    const parsed = parseEntityDocument(json.value, domain);
    if (!parsed.ok) return rejected(parsed.problems, isObject(json.value) ? json.value.network_id : undefined);

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
    const properties = checkEntries(doc.properties, limits.maxClaims, "properties", (e) => checkProperty(doc, e, opts));
    const credentials = checkEntries(doc.credentials, limits.maxClaims, "credentials", (e) => checkCredential(doc, e, opts));
    const connections = checkEntries(doc.connections, limits.maxConnections, "connections", (e) => checkConnection(domain, e, opts));
    const all = (slots: ClaimSlot[]) => Promise.all(slots.map((s) => s.result));
    const result = Promise.all([all(properties), all(credentials), all(connections)]).then(([p, c, n]) => {
      const full: EntityResult = {
        entity,
        properties: p.map((r) => r.claim),
        credentials: c.map((r) => r.claim),
        connections: n.map((r) => r.claim),
        jsonld: null,
        cache: { ...cacheInfo, stale: cacheInfo.stale || [...p, ...c, ...n].some((r) => r.stale) },
      };
      full.jsonld = buildJsonLd(jsonLdInput(domain, doc, full)) as Record<string, unknown>;
      return full;
    });
    return { entity, cache: cacheInfo, properties, credentials, connections, result };
  }

  async function resolveEntity(domain: string, opts: ResolveOptions = {}): Promise<EntityResult> {
    return (await resolveEntityStaged(domain, opts)).result;
  }

  /** The claim about `id` in a resolved entity, or why the owner or holder does not make it. */
  function focusOn(result: EntityResult, list: "properties" | "credentials", id: string, fallback: Omit<Claim, "verified" | "problems">, what: string): Claim {
    const found = result[list].find((c) => c.id !== null && sameId(c.id, id));
    if (found) return found;
    const reason: Reason =
      result.entity.status === "accepted" ? "not_claimed" : result.entity.status === "rejected" ? "invalid_document" : result.entity.status;
    const message =
      reason === "not_claimed"
        ? `${result.entity.domain}'s entity document does not list ${id} among its ${list}; ${what}`
        : `${result.entity.domain}'s entity document could not be used (${result.entity.status}), so the claim cannot be confirmed`;
    return { ...fallback, verified: false, reason, problems: [error(reason, message)] };
  }

  async function resolvePropertyQuery(query: Query & { kind: "property_id" }, opts: ResolveOptions): Promise<SearchResponse> {
    const id = query.id;
    const loc = propertyLocation(query.domain);
    const response: SearchResponse = { schema: SCHEMA_ID, query: publicQuery(query), results: [], problems: [] };
    const fetched = await fetchDocument(loc, opts);
    if (!fetched.ok) {
      response.problems.push(error(fetched.status, fetched.message));
      return response;
    }
    const json = fetched.json;
    const parsed = json.ok ? parsePropertyDocument(json.value) : null;
    if (!json.ok || !parsed || !parsed.ok) {
      const why = !json.ok ? `not valid JSON (${json.message})` : (parsed?.problems.map((p) => p.message).join("; ") ?? "");
      response.problems.push(error("invalid_document", `The property document at ${fetched.source.url} is not valid: ${why}`));
      return response;
    }
    const property = parsed.doc.ident_property;
    if (!sameId(property.id, id)) {
      response.problems.push(error("id_mismatch", `${query.domain}'s property document is about ${property.id}, not ${id}`));
      return response;
    }
    response.problems.push(...fetched.problems, ...parsed.problems);
    const owners: { owner: string; domain: string }[] = [];
    const seen = new Set<string>();
    const invalid: string[] = [];
    for (const owner of property.ownership) {
      const domain = parseNetworkId(owner);
      if (domain === null) invalid.push(owner);
      else if (!seen.has(idKey(owner))) {
        seen.add(idKey(owner));
        owners.push({ owner, domain });
      }
    }
    if (invalid.length > 0) {
      const shown = invalid.slice(0, 5).map((o) => JSON.stringify(o.slice(0, 100))).join(", ");
      response.problems.push(warning("invalid_owner", `ownership lists ${invalid.length} value(s) that are not network_ids: ${shown}${invalid.length > 5 ? ", …" : ""}`));
    }
    if (owners.length > limits.maxClaims) {
      response.problems.push(warning("limit", `ownership lists ${owners.length} owners; only the first ${limits.maxClaims} are checked`));
    }
    response.results = await Promise.all(
      owners.slice(0, limits.maxClaims).map(async ({ owner, domain }) => {
        const result = await resolveEntity(domain, opts);
        const fallback = { id, claimed: owner, document: json.value, source: fetched.source };
        result.focus = focusOn(result, "properties", id, fallback, `an owner verifies only when its own document lists the property (V3)`);
        return result;
      }),
    );
    return response;
  }

  async function resolveCredentialQuery(query: Query & { kind: "credential_id" }, opts: ResolveOptions): Promise<SearchResponse> {
    const id = query.id;
    const response: SearchResponse = { schema: SCHEMA_ID, query: publicQuery(query), results: [], problems: [] };
    const fetched = await fetchDocument(credentialLocation(query.credential), opts);
    if (!fetched.ok) {
      response.problems.push(error(fetched.status, fetched.message));
      return response;
    }
    const json = fetched.json;
    const parsed = json.ok ? parseCredentialDocument(json.value) : null;
    const holder = parsed?.ok ? parseNetworkId(parsed.doc.ident_entity_id) : null;
    if (!json.ok || !parsed?.ok || holder === null) {
      const why = !json.ok
        ? `not valid JSON (${json.message})`
        : parsed && !parsed.ok
          ? parsed.problems.map((p) => p.message).join("; ")
          : "its ident_entity_id is not a network_id";
      response.problems.push(error("invalid_document", `The credential document at ${fetched.source.url} is not valid: ${why}`));
      return response;
    }
    response.problems.push(...fetched.problems, ...parsed.problems);
    const result = await resolveEntity(holder, opts);
    const fallback = { id, claimed: parsed.doc.ident_entity_id, document: json.value, source: fetched.source };
    result.focus = focusOn(result, "credentials", id, fallback, "a credential verifies only when the holder's document references it (V4)");
    response.results = [result];
    return response;
  }

  async function resolve(query: Query, opts: ResolveOptions = {}): Promise<SearchResponse> {
    if (query.kind === "property_id") return resolvePropertyQuery(query, opts);
    if (query.kind === "credential_id") return resolveCredentialQuery(query, opts);
    return { schema: SCHEMA_ID, query: publicQuery(query), results: [await resolveEntity(query.domain, opts)], problems: [] };
  }

  return {
    async search(input, opts) {
      const parsed = parseQuery(input);
      if (!parsed.ok) return { ok: false, error: { code: "invalid_query", message: parsed.message } };
      return { ok: true, response: await resolve(parsed.query, opts) };
    },
    resolve,
    resolveEntity,
    resolveEntityStaged,
  };
}

/** A value the code above has already checked; a null here is a bug, so it throws. */
function must<T>(value: T | null, invariant: string): T {
  if (value === null) throw new Error(`invariant broken: ${invariant}`);
  return value;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function publicQuery(query: Query): SearchResponse["query"] {
  return { input: query.input, kind: query.kind, domain: query.domain };
}

/** The JSON-LD input of an accepted entity: only its verified claims (SPEC §10). */
function jsonLdInput(domain: string, entity: EntityDocument, result: EntityResult): JsonLdInput {
  const verified = (claims: Claim[]) => claims.filter((c) => c.verified);
  // Verified claims' documents parsed before; parsing again is pure and cheap, and needs no cast.
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

