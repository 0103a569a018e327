/**
 * The catalogue of reasons (docs/decisions.md#reasons): every reason a claim fails, every way an
 * entity document is not accepted and every warning, with what it means and how to fix it. The one
 * source of these words: the cards, `/reasons`, the CLI and `ident check` all read them from here.
 */
import { DEFAULTS, MiB } from "../limits.ts";
import { ownValue } from "../objects.ts";
import type { EntityStatus } from "../result/record.ts";
import { REASONS, type Reason } from "../protocol/reasons.ts";

/** What the words below depend on: the configured limits, so they never state a limit other than the one applied. */
export type Settings = {
  fetchTimeoutMs: number;
  /** The time the index's times are told against ("yesterday"). @default now */ now?: Date;
};

type Said = string | ((s: Settings) => string);

/** One entry of the catalogue. */
export type Explanation = {
  /** A few words, shown beside the detailed message ("the property does not name this entity as an owner"). */
  short: string;
  /** What it means, in a sentence or two. */
  means: Said;
  /** What the publisher can do. */
  fix: Said;
};

const seconds = (ms: number) => `${ms % 1000 === 0 ? ms / 1000 : (ms / 1000).toFixed(1)} second${ms === 1000 ? "" : "s"}`;
const size = (bytes: number) => `${bytes / MiB} MiB`;
const BLOCKED_FIX = "Serve the document over HTTPS on port 443 from a public address, with at most 3 redirects, all of them https.";

/** Why a claim is not verified (docs/decisions.md#verification). */
export const CLAIM_REASONS: Record<Reason, Explanation> = {
  invalid_entry: {
    short: "the entry is malformed",
    means: "The entry in the entity's own list has no id of the right form, so there is nothing to check.",
    fix: "Give the entry an id of the right form (§:property:{domain}, or @user@domain for a credential).",
  },
  duplicate: {
    short: "the entry repeats an earlier one",
    means: "The same id (compared without regard to case) is listed twice; only the first one is checked.",
    fix: "Remove the repeated entry.",
  },
  limit: {
    short: "not checked: over a limit",
    means:
      "The resolver did not check this claim: the entity lists more claims than it checks, or this lookup, or the counterpart's site, has had all the fetches it may for now.",
    fix: "List fewer claims (only the first ones of each kind are checked), or check again in a minute.",
  },
  not_found: {
    short: "the counterpart document was not found",
    means: "The counterpart site answered, but neither its JSON document nor the embedded fallback in its page is there.",
    fix: 'Publish the counterpart document at its URL, or embed it in the page as a <script type="application/json">.',
  },
  unreachable: {
    short: "the publisher could not be reached",
    means:
      "No answer could be had from the counterpart site: its name does not resolve, the connection was refused, the TLS handshake failed or its certificate is not valid for the name.",
    fix: "Make sure the counterpart site answers over HTTPS with a valid certificate for its name.",
  },
  timeout: {
    short: "the publisher did not answer in time",
    means: (s) => `The counterpart site did not send its whole answer within ${seconds(s.fetchTimeoutMs)}.`,
    fix: (s) => `Make the counterpart site answer within ${seconds(s.fetchTimeoutMs)}.`,
  },
  too_large: {
    short: "the document is too large",
    means: `The counterpart document is over the size the resolver reads (${size(DEFAULTS.maxBytes.json)}, or ${size(DEFAULTS.maxBytes.html)} for a page).`,
    fix: `Keep the document under ${size(DEFAULTS.maxBytes.json)} (${size(DEFAULTS.maxBytes.html)} for a page).`,
  },
  blocked: {
    short: "the address is not one the resolver fetches",
    means:
      "The URL, or a redirect from it, leads to a private or reserved address, a port other than 443, plain http, or too many redirects; the resolver does not go there.",
    fix: BLOCKED_FIX,
  },
  invalid_document: {
    short: "the counterpart document is invalid",
    means: "The counterpart document was found, but it is not valid JSON or lacks a required field.",
    fix: "Fix the counterpart document so it has the required fields (see the schemas at /schemas/).",
  },
  id_mismatch: {
    short: "the property document carries another id",
    means: "The property document served by the site carries an id other than the one claimed.",
    fix: "The property document must carry the id of the site it is served from: §:property:{that domain}.",
  },
  not_listed: {
    short: "the property does not name this entity as an owner",
    means:
      "The property document was found, but its ownership list does not name this entity; a claim counts only when both sides name each other.",
    fix: "Add this entity's network_id to the ownership list of the property document.",
  },
  not_claimed: {
    short: "the entity does not claim it",
    means: "The counterpart names this entity, but the entity's own document does not list the claim.",
    fix: "List the claim in the entity's own document (/ident.json) too.",
  },
  entity_mismatch: {
    short: "the credential names another entity",
    means: "The issuer's credential document was found, but its ident_entity_id names another entity than the holder.",
    fix: "The issuer must put this entity's network_id in ident_entity_id.",
  },
  unsafe_url: {
    short: "the URL is not a safe https link",
    means: "The connection is not an absolute https: URL, so the resolver does not fetch it.",
    fix: "Use an absolute https:// URL.",
  },
  no_backlink: {
    short: "the page does not link back with rel=me",
    means: 'The profile page was fetched, but it has no link with rel="me" to this entity\'s home page.',
    fix: 'Add a link with rel="me" to this entity\'s home page (https://{domain}/) on that profile page.',
  },
};

/** Why an entity document is not accepted: each status (docs/decisions.md#the-result-record). */
export const ENTITY_STATUSES: Record<Exclude<EntityStatus, "accepted">, Explanation> = {
  rejected: {
    short: "rejected: the entity document is not valid",
    means: "The entity document was found but is not valid: see its problems (each has its own entry below).",
    fix: "Publish a JSON object whose network_id is §:entity: followed by this domain.",
  },
  not_found: {
    short: "no entity document was found",
    means: "The domain answered, but it serves no /ident.json and its home page embeds no entity document.",
    fix: 'Publish /ident.json on this domain, or embed <script type="application/json" id="ident-hub"> in its home page.',
  },
  unreachable: {
    short: "the domain could not be reached",
    means: "No answer could be had: the name does not resolve, the connection was refused, or the TLS handshake or certificate failed.",
    fix: "Make sure the domain answers over HTTPS with a valid certificate for its name.",
  },
  timeout: {
    short: "the domain did not answer in time",
    means: (s) => `The domain did not send its whole answer within ${seconds(s.fetchTimeoutMs)}.`,
    fix: (s) => `Make the domain answer within ${seconds(s.fetchTimeoutMs)}.`,
  },
  too_large: {
    short: "the entity document is too large",
    means: `The entity document is over the ${size(DEFAULTS.maxBytes.json)} the resolver reads.`,
    fix: `Keep the entity document under ${size(DEFAULTS.maxBytes.json)}.`,
  },
  blocked: {
    short: "the domain leads somewhere the resolver does not go",
    means:
      "The domain, or a redirect from it, leads to a private or reserved address, a port other than 443, plain http, or too many redirects.",
    fix: BLOCKED_FIX,
  },
};

/** Problems that reject an entity document (docs/decisions.md#validation). */
export const ENTITY_PROBLEMS: Record<string, Explanation> = {
  not_an_object: {
    short: "the document is not a JSON object",
    means: "The entity document parsed as JSON, but it is an array, a string or a number, not an object.",
    fix: 'Publish one JSON object: {"network_id": "§:entity:{domain}", ...}.',
  },
  unknown_document: {
    short: "the file is none of the three documents",
    means:
      "An entity document has network_id, a property document ident_property, and a credential document ident_entity_id and ident_credential; this file has none of them.",
    fix: "Start from the worked examples in the publishing guide, or point an editor at the schemas at /schemas/.",
  },
  invalid_json: {
    short: "the document is not valid JSON",
    means: "The entity document could not be parsed as JSON.",
    fix: "Check the document with a JSON validator (or `npx ident check <file>`) and fix the syntax.",
  },
  missing_network_id: {
    short: "the document has no network_id",
    means: "The network_id is the one required field of an entity document (V1).",
    fix: 'Add "network_id": "§:entity:{domain}", with this domain.',
  },
  invalid_network_id: {
    short: "network_id is not of the form §:entity:{domain}",
    means: "The network_id must be §:entity: followed by a domain name, such as §:entity:example.com.",
    fix: 'Write it as "§:entity:{domain}", with the section sign § (U+00A7) and this domain.',
  },
  network_id_domain_mismatch: {
    short: "the document claims another domain's identity",
    means: "The document served by this domain names another domain in network_id; only that domain can publish its identity.",
    fix: "Put this domain in network_id, or publish the document on the domain it names.",
  },
};

/** Warnings: the document is read, but something in it was ignored or is doubtful. */
export const WARNINGS: Record<string, Explanation> = {
  invalid_field: {
    short: "a field has the wrong type and was ignored",
    means: "An optional field is present with the wrong type (a number for a string, an object for a list); it was left out.",
    fix: "Give the field the type the schema says, or remove it.",
  },
  unsafe_url: {
    short: "a URL is not an absolute http(s) URL",
    means: "A URL field is not an absolute https: or http: URL, so it is shown as text, never as a link.",
    fix: "Use an absolute https:// URL.",
  },
  unknown_entity_type: {
    short: "entity_type is neither person nor organization",
    means: "The entity_type decides the schema.org type of the page; another value is shown without one.",
    fix: 'Use "person" or "organization".',
  },
  credential_id_mismatch: {
    short: "the credential document carries another id",
    means:
      "The issuer's credential document names a different credential id than the one the holder claims; the claim is checked all the same.",
    fix: "The issuer should set ident_credential.id to the id the holder lists (it follows from where the document is served).",
  },
  invalid_owner: {
    short: "an owner is not a network_id",
    means: "An entry of the property document's ownership list is not of the form §:entity:{domain}; it was skipped.",
    fix: 'Write each owner as {"network_id": "§:entity:{domain}"}.',
  },
  content_type: {
    short: "the document is not served as application/json",
    means: "The document was read all the same, but some clients will not.",
    fix: "Serve the document with Content-Type: application/json.",
  },
  too_many_entries: {
    short: "a list is longer than the resolver reports",
    means: "Only the first 1,000 entries of a list are read and reported; the rest are ignored.",
    fix: "Split or shorten the list.",
  },
  not_fetched_again: {
    short: "some documents are as last fetched",
    means:
      "A fetch this lookup needed was declined for now (a site's or server's requests for this minute are spent), so the document fetched within the last day was used instead.",
    fix: "Nothing to change: ask again in a minute for documents fetched now.",
  },
  limit: {
    short: "not everything was checked",
    means: "The lookup reached a limit (its fetch budget, or a site's) and left some counterparts unchecked.",
    fix: "Check again in a minute; list fewer claims.",
  },
};

/** The catalogue's sections, in the order `/reasons` shows them, with each entry's anchor prefix. */
export const CATALOGUE = [
  { anchor: "claim", title: "Why a claim is not verified", entries: CLAIM_REASONS as Record<string, Explanation> },
  { anchor: "entity", title: "Why an entity is not accepted", entries: ENTITY_STATUSES as Record<string, Explanation> },
  { anchor: "document", title: "What makes an entity document invalid", entries: ENTITY_PROBLEMS },
  { anchor: "warning", title: "Warnings", entries: WARNINGS },
] as const;
export type CatalogueSection = (typeof CATALOGUE)[number]["anchor"];

/** The anchor of an entry on `/reasons`, such as `claim-not_listed`. */
export const reasonAnchor = (section: CatalogueSection, code: string) => `${section}-${code}`;

/** A catalogue text as said under the configured limits (a text may name one). */
export const said = (text: Said, s: Settings) => (typeof text === "string" ? text : text(s));

/** Short plain words for each reason, shown beside the detailed message. */
const REASON_WORDS = Object.fromEntries(REASONS.map((r) => [r, CLAIM_REASONS[r].short])) as Record<Reason, string>;

const STATUS_WORDS: Record<EntityStatus, string> = {
  accepted: "accepted",
  ...(Object.fromEntries(Object.entries(ENTITY_STATUSES).map(([k, v]) => [k, v.short])) as Record<
    Exclude<EntityStatus, "accepted">,
    string
  >),
};

/**
 * The few words of a reason, shown beside the detailed message. A value outside the closed set (an
 * imported index's, `constructor` among them) has none: undefined, for the caller to say in its own
 * words (docs/decisions.md#rendering).
 */
export function reasonText(reason: Reason): string;
export function reasonText(reason: string): string | undefined;
export function reasonText(reason: string): string | undefined {
  return ownValue(REASON_WORDS, reason);
}

/** The few words of an entity's status; undefined for a value outside the closed set, as {@link reasonText}. */
export function statusText(status: EntityStatus): string;
export function statusText(status: string): string | undefined;
export function statusText(status: string): string | undefined {
  return ownValue(STATUS_WORDS, status);
}

/** What the publisher can do about a claim that failed for `reason`; undefined for a value outside the closed set. */
export function reasonFix(reason: Reason, s: Settings): string;
export function reasonFix(reason: string, s: Settings): string | undefined;
export function reasonFix(reason: string, s: Settings): string | undefined {
  const entry = ownValue(CLAIM_REASONS, reason);
  return entry && said(entry.fix, s);
}

/** What the publisher of an entity can do when its document was not accepted; undefined for a status outside the closed set. */
export function statusFix(status: Exclude<EntityStatus, "accepted">, s: Settings): string;
export function statusFix(status: string, s: Settings): string | undefined;
export function statusFix(status: string, s: Settings): string | undefined {
  const entry = ownValue(ENTITY_STATUSES, status);
  return entry && said(entry.fix, s);
}

/** The entry for a problem code of a document: a rejection, a claim reason or a warning. */
export function explainProblem(
  code: string,
  severity: "error" | "warning",
  prefer?: CatalogueSection,
): { section: CatalogueSection; entry: Explanation } | null {
  const order: CatalogueSection[] = prefer
    ? [prefer, "document", "claim", "entity", "warning"]
    : severity === "warning"
      ? ["warning", "document", "claim", "entity"]
      : ["document", "claim", "entity", "warning"];
  for (const section of order) {
    const entries = CATALOGUE.find((s) => s.anchor === section)?.entries;
    // Own entries only: a code such as "constructor" is no entry.
    const entry = entries ? ownValue(entries, code) : undefined;
    if (entry) return { section, entry };
  }
  return null;
}
