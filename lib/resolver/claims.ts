/**
 * Checking an entity's claims: the per-entity budget (V2, docs/decisions.md#budget), then each claim
 * against its counterpart document (V3, V4, V5) or page (rel=me), all started at once.
 */
import { htmlReady } from "../documents/embed.ts";
import { parseCredentialDocument, type CredentialEntry } from "../documents/credential.ts";
import { keptJson } from "../documents/display-limits.ts";
import type { Connection, ParsedEntity } from "../documents/entity.ts";
import type { DocumentParse, Entry } from "../documents/lenient.ts";
import { error, warning, withDetail, type Problem } from "../documents/problem.ts";
import { parsePropertyDocument, type Property } from "../documents/property.ts";
import { parseCredentialId, parsePropertyId, sameId } from "../protocol/ids.ts";
import { credentialLocation, propertyLocation, type DocumentLocation } from "../protocol/locations.ts";
import type { Reason, Verdict } from "../protocol/reasons.ts";
import type { Claim, Source } from "../result/record.ts";
import { connectionUrl } from "../rules/connection.ts";
import { verifyCredential } from "../rules/credential.ts";
import { verifyProperty } from "../rules/property.ts";
import type { FetchMode } from "../fetch/outcome.ts";
import { isRefusal, type FetchRefusal } from "../traffic/refusal.ts";
import { LABEL, toSource, type FetchDocument, type Load, type ResolveOptions } from "./documents.ts";
import type { ParseMemo } from "./memo.ts";
import { pacedStart } from "./pacing.ts";

/** One claim being checked: what was published now, the verdict later. */
export type ClaimSlot = { id: string | null; claimed: unknown; result: Promise<CheckedClaim> };
export type CheckedClaim = { claim: Claim; stale: boolean };

type Checked<T = unknown> = {
  verdict: Verdict;
  document?: unknown;
  parsed?: T;
  source?: Source;
  httpStatus?: number;
  problems: Problem[];
  stale: boolean;
};

/**
 * A claim of the result record. What it carries of a publisher's JSON (the entry, the counterpart's
 * body) is kept to its lengths (`keptJson`, docs/decisions.md#the-result-record); the check read it whole.
 */
function toClaim(id: string | null, claimed: unknown, checked: Checked, entryProblems: Problem[]): Claim {
  const problems = [...entryProblems, ...checked.problems];
  const claim: Claim = { id, verified: checked.verdict.verified, claimed: keptJson(claimed), problems };
  if (!checked.verdict.verified) {
    claim.reason = checked.verdict.reason;
    problems.push(withDetail(error(checked.verdict.reason, checked.verdict.message), checked.verdict.detail));
  }
  if (checked.document !== undefined) claim.document = keptJson(checked.document);
  if (checked.source) claim.source = checked.source;
  if (checked.httpStatus !== undefined) claim.http_status = checked.httpStatus;
  return claim;
}

/** A claim that failed without a fetch. */
const failedClaim = (id: string | null, claimed: unknown, reason: Reason, message: string, problems: Problem[] = []): Claim => ({
  id,
  verified: false,
  reason,
  claimed: keptJson(claimed),
  problems: [...problems, error(reason, message)],
});

/** A claim this resolver declined or could not check (docs/architecture.md#traffic): `limit`, its verdict unknown. */
const notChecked = (id: string | null, claimed: unknown, refused: FetchRefusal, problems: Problem[]): Claim => ({
  id,
  verified: false,
  reason: "limit",
  claimed: keptJson(claimed),
  problems: [...problems, error("limit", `Not checked: ${refused.message}`)],
  not_checked: refused.refused,
});

/**
 * Starts `check` on each valid entry up to the budget, all at once; bad, repeated and over-budget
 * entries fail without a fetch (V2, docs/decisions.md#budget). A check this resolver declined or could
 * not do (docs/decisions.md#outbound-work) is reported `limit`, in its own words, and noted in the query's
 * work. Past a lookup's first few, each check that may fetch starts on a tick of its own (./pacing.ts);
 * one that reads the cache alone starts at once.
 */
export function checkEntries<T>(
  entries: Entry<T>[],
  budget: number,
  noun: string,
  check: (entry: Entry<T> & { ok: true }) => Promise<CheckedClaim | FetchRefusal>,
  opts: ResolveOptions,
): ClaimSlot[] {
  const work = opts.work;
  // Turns are taken per query (its work): every lookup through the resolver has one.
  const owner = opts.cacheOnly ? undefined : work;
  let used = 0;
  return entries.map((entry): ClaimSlot => {
    const slot = (result: CheckedClaim | Promise<CheckedClaim>) => ({
      id: entry.id,
      claimed: keptJson(entry.raw),
      result: Promise.resolve(result),
    });
    if (!entry.ok) {
      const message = entry.problems.map((p) => p.message).join("; ");
      return slot({
        claim: failedClaim(
          entry.id,
          entry.raw,
          entry.reason,
          message,
          entry.problems.filter((p) => p.code !== entry.reason),
        ),
        stale: false,
      });
    }
    if (++used > budget) {
      const message = `Only the first ${budget} ${noun} of an entity are checked; this one was not fetched`;
      return slot({ claim: failedClaim(entry.id, entry.raw, "limit", message, entry.problems), stale: false });
    }
    const paced = owner ? pacedStart(owner) : null;
    const checked = (answer: CheckedClaim | FetchRefusal): CheckedClaim => {
      if (!isRefusal(answer)) return answer;
      work?.refused.push(answer.refused);
      return { claim: notChecked(entry.id, entry.raw, answer, entry.problems), stale: false };
    };
    return slot((paced ? paced.then(() => check(entry)) : check(entry)).then(checked));
  });
}

/** The refusal a read of a URL would surely meet now, if any (the resolver's; see lib/resolver/index.ts). */
export type RefusedNow = (url: string, mode: FetchMode, opts: ResolveOptions) => FetchRefusal | null;

/** What the claim checks read through: the document fetcher, the page loader, the parse memo and `refusedNow`. */
type ClaimDeps = { fetchDocument: FetchDocument; load: Load; memo: ParseMemo; refusedNow: RefusedNow };

/**
 * The three claim checks, over a document fetcher and the parse memo. A check whose first document
 * would surely be refused is refused before it starts (`refusedNow`).
 */
export function createClaimChecks(fetchDocument: FetchDocument, load: Load, memo: ParseMemo, refusedNow: RefusedNow = () => null) {
  const deps: ClaimDeps = { fetchDocument, load, memo, refusedNow };
  return {
    /** V3: the property document's `ownership[]` names the entity, and its id is the one claimed. */
    checkProperty: (entity: ParsedEntity, entry: Entry<Property> & { ok: true }, opts: ResolveOptions) =>
      checkProperty(deps, entity, entry, opts),
    /** V4, V5: the issuer's credential document names the entity in `ident_entity_id`. */
    checkCredential: (entity: ParsedEntity, entry: Entry<CredentialEntry> & { ok: true }, opts: ResolveOptions) =>
      checkCredential(deps, entity, entry, opts),
    /** rel=me: the page at the connection URL links back to the entity's home page. */
    checkConnection: (domain: string, entry: Entry<Connection> & { ok: true }, opts: ResolveOptions) =>
      checkConnection(deps, domain, entry, opts),
  };
}

/** Fetches and parses a counterpart document, then applies `rule` to it. */
async function checkDocument<T>(
  fetchDocument: FetchDocument,
  loc: DocumentLocation,
  parse: (value: unknown) => DocumentParse<T>,
  rule: (doc: T) => Verdict,
  opts: ResolveOptions,
): Promise<Checked<T> | FetchRefusal> {
  const fetched = await fetchDocument(loc, opts);
  if (isRefusal(fetched)) return fetched;
  if (!fetched.ok) {
    return {
      verdict: {
        verified: false as const,
        reason: fetched.status,
        message: fetched.message,
        ...(fetched.detail ? { detail: fetched.detail } : {}),
      },
      problems: [],
      stale: fetched.stale,
      ...(fetched.httpStatus === undefined ? {} : { httpStatus: fetched.httpStatus }),
    };
  }
  const { source, stale } = fetched;
  const json = fetched.json;
  if (!json.ok) {
    const message = `The ${LABEL[loc.kind]} at ${fetched.source.url} is not valid JSON (${json.message})`;
    return { source, stale, verdict: { verified: false, reason: "invalid_document", message }, problems: fetched.problems };
  }
  const parsed = parse(json.value);
  if (!parsed.ok) {
    const message = `The ${LABEL[loc.kind]} at ${fetched.source.url} is not valid: ${parsed.problems.map((p) => p.message).join("; ")}`;
    return {
      source,
      stale,
      document: json.value,
      verdict: { verified: false, reason: "invalid_document", message },
      problems: fetched.problems,
    };
  }
  return {
    source,
    stale,
    document: json.value,
    parsed: parsed.doc,
    verdict: rule(parsed.doc),
    problems: [...fetched.problems, ...parsed.problems],
  };
}

/** V3: the property document's `ownership[]` names the entity, and its id is the one claimed. */
function checkProperty(
  deps: ClaimDeps,
  entity: ParsedEntity,
  entry: Entry<Property> & { ok: true },
  opts: ResolveOptions,
): Promise<CheckedClaim | FetchRefusal> {
  const domain = parsePropertyId(entry.value.id);
  if (domain === null) throw new Error("invariant broken: a valid entry has a property id");
  const loc = propertyLocation(domain);
  const refused = deps.refusedNow(loc.json, "json", opts);
  return refused ? Promise.resolve(refused) : verifyPropertyClaim(deps, entity, entry, opts, domain, loc);
}

/** V3, once its document may be read: fetches the property document and applies the rule. */
async function verifyPropertyClaim(
  deps: ClaimDeps,
  entity: ParsedEntity,
  entry: Entry<Property> & { ok: true },
  opts: ResolveOptions,
  domain: string,
  loc: DocumentLocation,
): Promise<CheckedClaim | FetchRefusal> {
  const rule = (doc: Parameters<typeof verifyProperty>[2]) => verifyProperty(entity.network_id, entry.value.id, doc, domain);
  const checked = await checkDocument(deps.fetchDocument, loc, parsePropertyDocument, rule, opts);
  if (isRefusal(checked)) return checked;
  return { claim: toClaim(entry.id, entry.raw, checked, entry.problems), stale: checked.stale };
}

/** V4, V5: the issuer's credential document names the entity in `ident_entity_id`. */
function checkCredential(
  deps: ClaimDeps,
  entity: ParsedEntity,
  entry: Entry<CredentialEntry> & { ok: true },
  opts: ResolveOptions,
): Promise<CheckedClaim | FetchRefusal> {
  const id = parseCredentialId(entry.value.id);
  if (id === null) throw new Error("invariant broken: a valid entry has a credential id");
  const loc = credentialLocation(id);
  const refused = deps.refusedNow(loc.json, "json", opts);
  return refused ? Promise.resolve(refused) : verifyCredentialClaim(deps, entity, entry, opts, id.domain, loc);
}

/** V4, V5, once its document may be read: fetches the credential document, applies the rule, and warns of another id. */
async function verifyCredentialClaim(
  deps: ClaimDeps,
  entity: ParsedEntity,
  entry: Entry<CredentialEntry> & { ok: true },
  opts: ResolveOptions,
  issuer: string,
  loc: DocumentLocation,
): Promise<CheckedClaim | FetchRefusal> {
  const rule = (doc: Parameters<typeof verifyCredential>[1]) => verifyCredential(entity.network_id, doc, issuer);
  const checked = await checkDocument(deps.fetchDocument, loc, parseCredentialDocument, rule, opts);
  if (isRefusal(checked)) return checked;
  const publishedId = checked.parsed?.ident_credential.id;
  if (checked.verdict.verified && publishedId !== undefined && !sameId(publishedId, entry.value.id)) {
    checked.problems.push(
      warning(
        "credential_id_mismatch",
        `${issuer}'s credential document carries the id ${publishedId}, not ${entry.value.id}`,
        "ident_credential.id",
      ),
    );
  }
  return { claim: toClaim(entry.id, entry.raw, checked, entry.problems), stale: checked.stale };
}

/** rel=me: the page at the connection URL links back to the entity's home page. */
function checkConnection(
  deps: ClaimDeps,
  domain: string,
  entry: Entry<Connection> & { ok: true },
  opts: ResolveOptions,
): Promise<CheckedClaim | FetchRefusal> {
  const url = connectionUrl(entry.value.id);
  if (!url) {
    const message = `${entry.value.id} is not an https: URL, so it is not checked`;
    return Promise.resolve({ claim: failedClaim(entry.id, entry.raw, "unsafe_url", message, entry.problems), stale: false });
  }
  const refused = deps.refusedNow(url.href, "html", opts);
  return refused ? Promise.resolve(refused) : verifyConnection(deps, domain, entry, opts, url);
}

/** rel=me, once its page may be read: loads the page and asks the memo whether it links back. */
async function verifyConnection(
  deps: ClaimDeps,
  domain: string,
  entry: Entry<Connection> & { ok: true },
  opts: ResolveOptions,
  url: URL,
): Promise<CheckedClaim | FetchRefusal> {
  const page = await deps.load(url.href, "html", opts);
  if (isRefusal(page)) return page;
  const outcome = page.outcome;
  if (outcome.ok) await htmlReady();
  const checked: Checked = outcome.ok
    ? { verdict: deps.memo.connection(domain, outcome), source: toSource(outcome, "page"), problems: [], stale: page.stale }
    : {
        verdict: {
          verified: false,
          reason: outcome.status,
          message: `The page ${url.href} could not be checked: ${outcome.message}`,
          ...(outcome.detail ? { detail: outcome.detail } : {}),
        },
        problems: [],
        stale: page.stale,
      };
  return { claim: toClaim(entry.id, entry.raw, checked, entry.problems), stale: checked.stale };
}

export type ClaimChecks = ReturnType<typeof createClaimChecks>;
