import { z } from "zod";
import { Problem } from "../documents/problem.ts";
import { FETCH_REFUSALS } from "../traffic/refusal.ts";
import { REASONS } from "../protocol/reasons.ts";

/** The result record of docs/decisions.md#the-result-record, printed by `ident resolve --json` and served by `/api/resolve`. */

export const SCHEMA_ID = "ident-resolver/search@1";

export const Reason = z.enum(REASONS);

export const Source = z.object({
  url: z.string(),
  via: z.enum(["json", "embed", "page"]),
  http_status: z.number().int(),
  content_type: z.string().nullable(),
  bytes: z.number().int(),
  ms: z.number(),
});
export type Source = z.infer<typeof Source>;

/** What the index remembers of a claim (docs/decisions.md#the-index); ISO-8601 times. */
export const ClaimSince = z.object({
  first_seen_at: z.string(),
  last_checked_at: z.string(),
  last_verified_at: z.string().optional(),
  verified_since: z.string().optional(),
  failing_since: z.string().optional(),
});
export type ClaimSince = z.infer<typeof ClaimSince>;

export const Claim = z.object({
  id: z.string().nullable(),
  verified: z.boolean(),
  reason: Reason.optional(),
  claimed: z.unknown(),
  document: z.unknown().optional(),
  source: Source.optional(),
  /** The final HTTP status of the counterpart's JSON URL, when it was not 200. */
  http_status: z.number().int().optional(),
  problems: z.array(Problem),
  since: ClaimSince.optional(),
  /**
   * Stale on error (docs/decisions.md#the-index): a verified claim whose re-check failed for a
   * transient reason keeps its verdict until `until`; `reason` is what the re-check met.
   */
  stale: z.object({ reason: Reason, message: z.string(), until: z.string() }).optional(),
  /**
   * This resolver declined or could not do the claim's check (docs/architecture.md#traffic): its
   * reason is `limit`, and its verdict is unknown, not failed. The index keeps what it knew.
   */
  not_checked: z.enum(FETCH_REFUSALS).optional(),
});
export type Claim = z.infer<typeof Claim>;

export const EntityStatus = z.enum(["accepted", "rejected", "not_found", "unreachable", "timeout", "too_large", "blocked"]);
export type EntityStatus = z.infer<typeof EntityStatus>;

export const EntityResult = z.object({
  entity: z.object({
    status: EntityStatus,
    domain: z.string(),
    network_id: z.string().optional(),
    entity_type: z.string().optional(),
    details: z.record(z.string(), z.string()).optional(),
    source: Source.optional(),
    problems: z.array(Problem),
    /** When the index last recorded a check of this entity (docs/decisions.md#the-index). */
    last_checked_at: z.string().optional(),
  }),
  properties: z.array(Claim),
  credentials: z.array(Claim),
  connections: z.array(Claim),
  focus: Claim.optional(),
  jsonld: z.record(z.string(), z.unknown()).nullable(),
  cache: z.object({ fetched_at: z.string(), stale: z.boolean() }),
});
export type EntityResult = z.infer<typeof EntityResult>;

export const QueryKind = z.enum(["domain", "url", "network_id", "property_id", "credential_id"]);

export const SearchResponse = z.object({
  schema: z.literal(SCHEMA_ID),
  /** Which resolver made the record (docs/library.md#versions): the package's name and version. */
  resolver: z.object({ name: z.literal("ident-resolver"), version: z.string() }).optional(),
  query: z.object({ input: z.string(), kind: QueryKind, domain: z.string() }),
  results: z.array(EntityResult),
  problems: z.array(Problem),
});
export type SearchResponse = z.infer<typeof SearchResponse>;

/** `{"error": {...}}` body of a 400 (docs/decisions.md#interfaces). */
/**
 * An API error: a bad query (400), a lookup refused for now (429, 503; docs/decisions.md#outbound-work),
 * an entity the index does not know (404) or an index that cannot be read (503; docs/decisions.md#the-index).
 */
export const ErrorBody = z.object({
  error: z.object({
    code: z.enum(["invalid_query", "invalid_request", "rate_limited", "busy", "not_found", "unavailable"]),
    message: z.string(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** The record's JSON Schema (draft 2020-12), for those who check it without zod (docs/library.md). */
export const searchResponseJsonSchema = (): Record<string, unknown> =>
  z.toJSONSchema(SearchResponse, { target: "draft-2020-12", unrepresentable: "any" }) as Record<string, unknown>;
