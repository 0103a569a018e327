/**
 * View models: results reshaped at the boundary into exactly what a card shows (docs/architecture.md). Every
 * string here is untrusted text, already cut to the display limits; every link is http(s) only.
 */
import {
  cleanText,
  clip,
  clipDescription,
  clipName,
  MAX_CLAIM_DESCRIPTION_LENGTH,
  MAX_CLAIM_TECHNICAL_LENGTH,
  MAX_CLAIM_TYPE_LENGTH,
  safeUrl,
} from "./display.ts";
import { reasonFix, reasonText, statusFix, statusText, type Settings } from "./explain.ts";
import { extend, ownValue } from "../objects.ts";
import { parseCredentialId } from "../protocol/ids.ts";
import type { Claim, EntityResult, EntityStatus, Source } from "../result/record.ts";
import { parseCredentialDocument } from "../documents/credential.ts";
import { isRecord } from "../documents/json.ts";
import { parsePropertyDocument } from "../documents/property.ts";
import type { Reason } from "../protocol/reasons.ts";
import { claimHistoryWords, type ClaimHistoryWords } from "./when.ts";

export type Link = { href: string; text: string };
export type SourceView = { url: string; via: "JSON document" | "HTML embed" | "page" };

export type EntityView = {
  domain: string;
  status: EntityStatus;
  statusText: string;
  name: string;
  badge: "Person" | "Organization" | null;
  networkId: string | null;
  description: string | null;
  location: string | null;
  email: string | null;
  legal: { label: string; value: string }[];
  source: SourceView | null;
  fetchedAt: string;
  stale: boolean;
  /** Why it is not accepted, and what to do; null when accepted. */
  failure: { message: string; fix: string } | null;
  warnings: string[];
};

export type ClaimKind = "property" | "credential" | "connection";

export type ClaimView = {
  kind: ClaimKind;
  id: string;
  verified: boolean;
  title: string;
  type: string | null;
  description: string | null;
  link: Link | null;
  issuer: { name: string; domain: string } | null;
  dataset: string | null;
  profile: Link | null;
  /** `technical`: the library's own words behind a failed connection (docs/decisions.md#reasons). */
  reason: { code: Reason; text: string; detail: string; fix: string; technical: string | null } | null;
  source: SourceView | null;
  warnings: string[];
  /** Since when the verdict holds, from the index (docs/decisions.md#the-index); null without one. */
  history: ClaimHistoryWords | null;
};

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v : null);
/** `clip(value)` when there is a value. */
const opt = (value: string | null, clip: (v: string) => string): string | null => (value ? clip(value) : null);

const VIA: Record<Source["via"], SourceView["via"]> = { json: "JSON document", embed: "HTML embed", page: "page" };

function sourceView(source: Source | undefined): SourceView | null {
  return source ? { url: cleanText(source.url), via: VIA[source.via] } : null;
}

function link(url: string | null, text?: string): Link | null {
  const href = url ? safeUrl(url) : null;
  return href ? { href, text: clipName(text ?? url ?? href) } : null;
}

const LEGAL: [string, string][] = [
  ["legal_name", "Legal name"],
  ["established", "Established"],
  ["registered_in", "Registered in"],
  ["legal_entity_type", "Legal entity type"],
];

export function entityView(entity: EntityResult["entity"], cache: EntityResult["cache"], settings: Settings): EntityView {
  const d = entity.details ?? {};
  const badge = entity.entity_type === "person" ? "Person" : entity.entity_type === "organization" ? "Organization" : null;
  const email = str(d.email);
  const failure =
    entity.status === "accepted"
      ? null
      : {
          message:
            entity.problems
              .filter((p) => p.severity === "error")
              .map((p) => cleanText(p.message))
              .join(" ") || statusText(entity.status),
          fix: statusFix(entity.status, settings),
        };
  return {
    domain: entity.domain,
    status: entity.status,
    statusText: statusText(entity.status),
    name: clipName(str(d.name) ?? entity.domain),
    badge,
    networkId: entity.network_id === undefined ? null : cleanText(entity.network_id),
    description: opt(get(d, "description"), clipDescription),
    location: opt(get(d, "location"), clipName),
    email: email && /^[^\s@<>"]+@[^\s@<>"]+$/.test(email) ? clipName(email) : null,
    legal:
      badge === "Organization"
        ? LEGAL.flatMap(([key, label]) => {
            const value = opt(get(d, key), clipName);
            return value ? [{ label, value }] : [];
          })
        : [],
    source: sourceView(entity.source),
    fetchedAt: cache.fetched_at,
    stale: cache.stale,
    failure,
    warnings: entity.problems.filter((p) => p.severity === "warning").map((p) => cleanText(p.message)),
  };
}

/**
 * A string at `path` inside an untrusted value, or null. Own fields only: a claimed entry with a
 * `__proto__` field, copied onto `{}` below, would otherwise lend its fields (docs/decisions.md#rendering).
 */
function get(value: unknown, ...path: string[]): string | null {
  let v = value;
  for (const key of path) {
    if (!isRecord(v)) return null;
    v = ownValue(v, key);
  }
  return str(v);
}

export function claimView(kind: ClaimKind, claim: Claim, settings: Settings): ClaimView {
  const claimed = isRecord(claim.claimed) ? claim.claimed : {};
  const base = {
    kind,
    id: clipName(claim.id ?? "(no id)"),
    verified: claim.verified,
    reason: claim.reason
      ? {
          code: claim.reason,
          text: reasonText(claim.reason),
          detail: cleanText(claim.problems.find((p) => p.code === claim.reason)?.message ?? reasonText(claim.reason)),
          fix: reasonFix(claim.reason, settings),
          technical: opt(claim.problems.find((p) => p.code === claim.reason)?.detail ?? null, (t) => clip(t, MAX_CLAIM_TECHNICAL_LENGTH)),
        }
      : null,
    source: sourceView(claim.source),
    warnings: claim.problems.filter((p) => p.severity === "warning").map((p) => cleanText(p.message)),
    history: claimHistoryWords(claim, settings.now ?? new Date()),
    issuer: null,
    dataset: null,
    profile: null,
  };
  if (kind === "connection") {
    return extend(base, {
      title: clipName(claim.id ?? "(no id)"),
      type: null,
      description: null,
      link: claim.verified ? link(claim.id) : null,
    });
  }
  if (kind === "property") {
    const doc = claim.verified ? parsePropertyDocument(claim.document) : null;
    const p: Record<string, unknown> = Object.assign({}, claimed, doc?.ok ? doc.doc.ident_property : {});
    return extend(extend(base, texts(p)), { link: link(get(p, "url")) });
  }
  // Credential: a verified one shows the issuer's own title (docs/decisions.md#verification).
  const parsed = claim.verified ? parseCredentialDocument(claim.document) : null;
  const c: Record<string, unknown> = Object.assign({}, claimed, parsed?.ok ? parsed.doc.ident_credential : {});
  const issuerDomain = claim.id ? (parseCredentialId(claim.id)?.domain.toLowerCase() ?? null) : null;
  const issuerName = get(c, "property", "name") ?? issuerDomain;
  const dataset = get(c, "dataset", "name");
  return extend(extend(base, texts(c, "title")), {
    link: null,
    issuer: issuerDomain && issuerName ? { name: clipName(issuerName), domain: issuerDomain } : null,
    dataset: opt(dataset, clipName),
    profile: link(get(c, "profile_url"), "Profile on the issuer's site"),
  });

  function texts(fields: Record<string, unknown>, titleKey = "name") {
    return {
      title: clipName(get(fields, titleKey) ?? claim.id ?? "(no id)"),
      type: opt(get(fields, "type"), (t) => clip(t, MAX_CLAIM_TYPE_LENGTH)),
      // docs/decisions.md#rendering: a card shows the start of a claim's description; a page of 110 claims stays small.
      description: opt(get(fields, "description"), (d) => clip(d, MAX_CLAIM_DESCRIPTION_LENGTH)),
    };
  }
}
