/**
 * `ident check <domain>` and `/check?q=` (docs/publishing.md#check): the domain resolved live through
 * the resolver every lookup uses, the cache bypassed, and each problem turned into a finding on the
 * document that must change. No rule is applied here: the findings are the lookup's own verdicts.
 */
import { entityLocation } from "../protocol/locations.ts";
import type { Resolver } from "../resolver/index.ts";
import type { Claim, EntityResult } from "../result/record.ts";
import type { CatalogueSection, Settings } from "../present/explain.ts";
import type { Problem } from "../documents/problem.ts";
import { isRefusal, type FetchRefusal } from "../traffic/refusal.ts";
import { backlinkFix, counterpartUrl, credentialFix, propertyFix } from "./fixes.ts";
import { buildReport, explained, pretty, type CheckReport, type DocumentReport, type Finding, type Snippet } from "./report.ts";

/** Paths of the entity document: a problem there is the entity's to fix, wherever it was found. */
const ENTITY_PATH = /^(?:properties|credentials|other_connections)\[/;

/** Reasons the entity's own document must change for (V2); every other reason is the counterpart's. */
const ENTITY_SIDE = new Set(["invalid_entry", "duplicate", "limit", "unsafe_url"]);

/** What to do about a claim this resolver declined or could not check now: nothing but ask again. */
const NOT_CHECKED_FIX = "Nothing to change: this resolver did not check the claim this time. Check again in a minute.";

type Kind = "property" | "credential" | "connection";

/** The live check of `domain`; the refusal when its entity document could not be fetched now (docs/architecture.md#traffic). */
export async function checkDomain(
  resolver: Resolver,
  domain: string,
  settings: Settings,
  client?: string,
): Promise<CheckReport | FetchRefusal> {
  // Live: a fetch refused now is said (a claim `not_checked`), never answered from a document known before.
  const result = await resolver.resolveEntity(domain, client ? { refresh: true, live: true, client } : { refresh: true, live: true });
  return isRefusal(result) ? result : reportOf(result, settings);
}

/** The report of a resolved entity: its own document first, then each counterpart to change. */
export function reportOf(result: EntityResult, settings: Settings): CheckReport {
  const e = result.entity;
  const entityUrl = e.source?.url ?? entityLocation(e.domain).json;
  const own: DocumentReport = { role: "entity", domain: e.domain, url: entityUrl, findings: [] };
  const others: DocumentReport[] = [];
  // A problem of the entity's own fetch is explained as the entity's, not a counterpart's.
  for (const p of e.problems) own.findings.push(problemFinding(p, settings, undefined, p.code === e.status ? "entity" : undefined));
  if (e.status !== "accepted") {
    const status = e.status;
    if (!e.problems.some((p) => p.code === status || p.severity === "error")) {
      own.findings.push(explained("error", status, `The entity document of ${e.domain} was not accepted`, settings));
    }
    // The minimal document that would be accepted, when there is none or its id is wrong.
    const fixable = status === "not_found" || e.problems.some((p) => p.path === "network_id" || p.code === "not_an_object");
    const first = own.findings.find((f) => f.severity === "error");
    if (fixable && first) {
      const document = { network_id: `§:entity:${e.domain}` };
      first.snippet = { where: `Publish at ${entityLocation(e.domain).json} at least`, language: "json", text: pretty(document), document };
    }
    return buildReport({ kind: "domain", domain: e.domain }, [own], result);
  }
  const networkId = e.network_id ?? `§:entity:${e.domain}`;
  const lists: [Kind, Claim[]][] = [
    ["property", result.properties],
    ["credential", result.credentials],
    ["connection", result.connections],
  ];
  for (const [kind, claims] of lists) {
    for (const claim of claims) {
      const theirs = counterpartReport(kind, claim);
      for (const p of claim.problems) {
        // docs/decisions.md#outbound-work: a claim this resolver did not check has nothing to fix.
        if (claim.not_checked !== undefined && p.code === "limit") {
          own.findings.push(explained("warning", p.code, p.message, settings, { claim: claim.id ?? undefined, fix: NOT_CHECKED_FIX }));
          continue;
        }
        const onEntity = p.path !== undefined ? ENTITY_PATH.test(p.path) : ENTITY_SIDE.has(p.code) && p.code === claim.reason;
        const finding = problemFinding(p, settings, claim.id ?? undefined);
        if (p.code === claim.reason && !claim.verified && !onEntity && theirs) {
          const snippet = snippetFor(kind, claim, networkId, e.domain);
          if (snippet) finding.snippet = snippet;
        }
        (onEntity || !theirs ? own : theirs).findings.push(finding);
      }
      if (theirs && theirs.findings.length > 0) others.push(theirs);
    }
  }
  return buildReport({ kind: "domain", domain: e.domain }, [own, ...others], result);
}

function problemFinding(p: Problem, settings: Settings, claim?: string, prefer?: CatalogueSection): Finding {
  const extra: Partial<Finding> = {};
  if (p.path !== undefined) extra.path = p.path;
  if (claim !== undefined) extra.claim = claim;
  if (p.detail !== undefined) extra.detail = p.detail;
  return explained(p.severity, p.code, p.message, settings, extra, prefer);
}

/** The counterpart document a claim points to, or null for a claim with no id to follow. */
function counterpartReport(kind: Kind, claim: Claim): DocumentReport | null {
  if (claim.id === null) return null;
  if (kind === "connection") {
    let host: string;
    try {
      host = new URL(claim.id).hostname;
    } catch {
      return null;
    }
    return { role: "profile page", domain: host, url: claim.id, findings: [] };
  }
  const url = claim.source?.url ?? counterpartUrl(kind, claim.id);
  if (!url) return null;
  return { role: kind, domain: new URL(url).hostname, url, findings: [] };
}

/** The exact text to publish for an unverified claim whose counterpart must change. */
function snippetFor(kind: Kind, claim: Claim, networkId: string, entityDomain: string): Snippet | null {
  const id = claim.id;
  if (id === null || !claim.reason) return null;
  const fixable = ["not_found", "invalid_document", "id_mismatch", "not_listed", "entity_mismatch", "no_backlink"];
  if (!fixable.includes(claim.reason)) return null;
  if (kind === "connection") return claim.reason === "no_backlink" || claim.reason === "not_found" ? backlinkFix(entityDomain) : null;
  if (kind === "property") return propertyFix(id, networkId, claim.claimed, claim.document);
  return credentialFix(id, networkId, claim.claimed, claim.document);
}
