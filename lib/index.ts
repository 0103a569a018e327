/**
 * The core entry of the `ident-resolver` package (docs/library.md): what runs wherever `fetch` exists.
 * Nothing it imports reaches a `node:` module; the guarded fetcher is in `ident-resolver/node`.
 */
export {
  createResolver,
  type IdentResolver,
  type ResolveCallOptions,
  type ResolveError,
  type ResolverLogger,
  type ResolverOptions,
} from "./library.ts";
export type { CachedDocument, ResolverCache } from "./fetch/user-cache.ts";
export { fetcherFromFetch, type WebFetch, type WebFetcherOptions } from "./fetch/web-fetch.ts";
export type { CheckReport, DocumentReport, Finding } from "./check/report.ts";
export { reasonText, statusText } from "./present/explain.ts";
export { createResolverCore, newWork } from "./resolver/index.ts";
export { NotCached } from "./resolver/documents.ts";
export type { Probe, Resolver, ResolverDeps, ResolveOptions, SearchOutcome, StagedEntity, ClaimSlot, Limits } from "./resolver/index.ts";
export { createDocumentCache, cacheKey, type DocumentCache, type CacheOptions } from "./fetch/cache.ts";
export type { Fetcher, FetchMode, FetchOutcome, FetchOptions, FailureStatus } from "./fetch/outcome.ts";
export { DEFAULTS, DEFAULT_LIMITS, MiB } from "./limits.ts";
export { extend, ownValue } from "./objects.ts";
export { RESOLVER, USER_AGENT, VERSION } from "./version.ts";
export {
  isDomain,
  looksLikeIdentifier,
  MAX_QUERY_LENGTH,
  parseCredentialId,
  parseNetworkId,
  parsePropertyId,
  parseQuery,
  QUERY_FORMS,
  sameId,
  SECTION,
  type CredentialId,
  type Query,
  type QueryKind,
} from "./protocol/ids.ts";
export { credentialLocation, entityLocation, propertyLocation, type DocumentKind, type DocumentLocation } from "./protocol/locations.ts";
export { REASONS, type Reason, type Verdict } from "./protocol/reasons.ts";
export { claimCounts, listedOnce, CLAIM_KINDS, type ListedClaim } from "./result/claims.ts";
export { profilePage, serializeJsonLd } from "./result/jsonld.ts";
export {
  Claim,
  EntityResult,
  EntityStatus,
  ErrorBody,
  SCHEMA_ID,
  SearchResponse,
  searchResponseJsonSchema,
  Source,
} from "./result/record.ts";
export { documentSchema, isSchemaKind, SCHEMA_KINDS, type SchemaKind } from "./documents/schemas.ts";
export { parseEntityDocument, type EntityParse, type ParsedEntity } from "./documents/entity.ts";
export { parsePropertyDocument } from "./documents/property.ts";
export { parseCredentialDocument } from "./documents/credential.ts";
export { isRecord } from "./documents/json.ts";
export { isRefusal, refusal, REFUSAL_KINDS, type FetchRefusal, type Refusal, type RefusalKind } from "./traffic/refusal.ts";
