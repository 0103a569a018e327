import { DEFAULTS, MiB } from "../limits";
import type { EntityStatus } from "../result/record";
import type { Reason } from "../protocol/reasons";

/** Short plain words for each reason (docs/decisions.md#verification), shown beside the detailed message. */
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

/** What the words below depend on: the configured limits, so they never state a limit other than the one applied. */
export type Settings = {
  fetchTimeoutMs: number;
  /** The time the index's times are told against ("yesterday"). @default now */ now?: Date;
};

const seconds = (ms: number) => `${ms % 1000 === 0 ? ms / 1000 : (ms / 1000).toFixed(1)} second${ms === 1000 ? "" : "s"}`;
const size = (bytes: number) => `${bytes / MiB} MiB`;

/** What the publisher can do about each reason. */
const REASON_FIX: Record<Reason, string | ((s: Settings) => string)> = {
  invalid_entry: "Give the entry an id of the right form (§:property:{domain}, or @user@domain for a credential).",
  duplicate: "Remove the repeated entry.",
  limit: "List fewer claims; only the first ones of each kind are checked.",
  not_found: 'Publish the counterpart document at its URL, or embed it in the page as a <script type="application/json">.',
  unreachable: "Make sure the counterpart site answers over HTTPS with a valid certificate.",
  timeout: (s) => `Make the counterpart site answer within ${seconds(s.fetchTimeoutMs)}.`,
  too_large: `Keep the document under ${size(DEFAULTS.maxBytes.json)} (${size(DEFAULTS.maxBytes.html)} for a page).`,
  blocked: "Serve the document over HTTPS on port 443 from a public address, with at most 3 redirects.",
  invalid_document: "Fix the counterpart document so it has the required fields.",
  id_mismatch: "The property document must carry the id of the site it is served from.",
  not_listed: "The property's owner list must name this entity's network_id.",
  not_claimed: "The entity's own document must list this claim too.",
  entity_mismatch: "The issuer must name this entity's network_id in ident_entity_id.",
  unsafe_url: "Use an absolute https:// URL.",
  no_backlink: 'Add a link with rel="me" to this entity\'s home page on that profile page.',
};

/** What the publisher of an entity can do when its document was not accepted. */
const STATUS_FIX: Record<Exclude<EntityStatus, "accepted">, string | ((s: Settings) => string)> = {
  rejected: "Publish a JSON object whose network_id is §:entity: followed by this domain.",
  not_found: 'Publish /ident.json on this domain, or embed <script type="application/json" id="ident-hub"> in its home page.',
  unreachable: "Make sure the domain answers over HTTPS with a valid certificate.",
  timeout: (s) => `Make the domain answer within ${seconds(s.fetchTimeoutMs)}.`,
  too_large: `Keep the entity document under ${size(DEFAULTS.maxBytes.json)}.`,
  blocked: "Serve the document over HTTPS on port 443 from a public address, with at most 3 redirects.",
};

const words = (text: string | ((s: Settings) => string), s: Settings) => (typeof text === "string" ? text : text(s));

/** What the publisher can do about a claim that failed for `reason`. */
export const reasonFix = (reason: Reason, s: Settings) => words(REASON_FIX[reason], s);

/** What the publisher of an entity can do when its document was not accepted. */
export const statusFix = (status: Exclude<EntityStatus, "accepted">, s: Settings) => words(STATUS_FIX[status], s);
