import type { EntityStatus } from "./result";
import type { Reason } from "./verify";

/** Short plain words for each reason (SPEC §6), shown beside the detailed message. */
export const REASON_TEXT: Record<Reason, string> = {
  invalid_entry: "the entry is malformed",
  duplicate: "the entry repeats an earlier one",
  limit: "not checked: over the per-entity limit",
  not_found: "the counterpart document was not found",
  unreachable: "the publisher could not be reached",
  timeout: "the publisher did not answer in time",
  too_large: "the document is too large",
  blocked: "the address is not one the resolver fetches",
  invalid_document: "the counterpart document is invalid",
  id_mismatch: "the property document carries another id",
  not_listed: "the property does not name this entity as an owner",
  not_claimed: "the entity does not claim it",
  entity_mismatch: "the credential names another entity",
  unsafe_url: "the URL is not a safe https link",
  no_backlink: "the page does not link back with rel=me",
};

export const STATUS_TEXT: Record<EntityStatus, string> = {
  accepted: "accepted",
  rejected: "rejected: the entity document is not valid",
  not_found: "no entity document was found",
  unreachable: "the domain could not be reached",
  timeout: "the domain did not answer in time",
  too_large: "the entity document is too large",
  blocked: "the domain leads somewhere the resolver does not go",
};
