import { Suspense } from "react";
import type { Refused } from "@/web/page-request";
import { app } from "@/web/app";
import type { StagedEntity } from "ident-resolver";
import type { Claim, EntityResult } from "ident-resolver";
import { claimView, entityView } from "ident-resolver/present";
import { CardActions, SettledCardActions } from "./card-actions";
import { ClaimCard } from "./claim-card";
import { FAILED, orFailure } from "@/web/settle";
import { StreamFailure } from "./stream-failure";
import { ClaimGroup, fromClaims, fromStaged } from "./claim-group";
import { EntityHeader } from "./entity-header";
import { JsonLd } from "./json-ld";
import { RefusalNotice } from "./refusal-notice";

type Layout = { headingLevel?: 1 | 2; linkToPage?: boolean };
type FocusKind = "property" | "credential";

/** One entity whose claims are all settled, with the claim a property or credential query was about first. */
export function EntityResultView({
  result,
  focusKind,
  jsonLd,
  headingLevel = 2,
  linkToPage = true,
}: Layout & { result: EntityResult; focusKind?: FocusKind; jsonLd: boolean }) {
  const sub = headingLevel === 1 ? 2 : 3;
  return (
    <article className="result" data-testid="result" data-domain={result.entity.domain}>
      <EntityHeader view={entityView(result.entity, result.cache, app().config)} headingLevel={headingLevel} linkToPage={linkToPage} />
      {result.focus && focusKind ? <Focus claim={result.focus} kind={focusKind} /> : null}
      <ClaimGroup kind="property" slots={fromClaims(result.properties)} headingLevel={sub} />
      <ClaimGroup kind="credential" slots={fromClaims(result.credentials)} headingLevel={sub} />
      <ClaimGroup kind="connection" slots={fromClaims(result.connections)} headingLevel={sub} />
      <CardActions domain={result.entity.domain} result={result} />
      {jsonLd ? <JsonLd result={result} profile={!linkToPage} /> : null}
    </article>
  );
}

/**
 * One entity streaming in: its header once its document arrives, each claim as its publisher answers
 * (one slow publisher holds only its own card), and its JSON-LD in the body once every claim settled.
 */
export async function StreamedEntityResult({
  staged,
  headingLevel = 2,
  linkToPage = true,
}: Layout & { staged: Promise<StagedEntity | Refused> }) {
  const entity = await orFailure(staged, "an entity's lookup", app().log.error);
  if (entity === FAILED) return <StreamFailure what="This lookup" />;
  if ("refused" in entity) return <RefusalNotice refusal={entity.refused} headingLevel={headingLevel} />;
  const sub = headingLevel === 1 ? 2 : 3;
  return (
    <article className="result" data-testid="result" data-domain={entity.entity.domain}>
      <EntityHeader view={entityView(entity.entity, entity.cache, app().config)} headingLevel={headingLevel} linkToPage={linkToPage} />
      <ClaimGroup kind="property" slots={fromStaged(entity.properties)} headingLevel={sub} />
      <ClaimGroup kind="credential" slots={fromStaged(entity.credentials)} headingLevel={sub} />
      <ClaimGroup kind="connection" slots={fromStaged(entity.connections)} headingLevel={sub} />
      <Suspense fallback={<CardActions domain={entity.entity.domain} result={null} />}>
        <SettledCardActions domain={entity.entity.domain} result={entity.result} />
      </Suspense>
      <Suspense fallback={null}>
        <JsonLd result={entity.result} profile={!linkToPage} />
      </Suspense>
    </article>
  );
}

function Focus({ claim, kind }: { claim: Claim; kind: FocusKind }) {
  return (
    <section className="focus" aria-label="The claim you searched for" data-testid="focus" data-verified={claim.verified}>
      <h3>{claim.verified ? "This claim verifies" : "This claim does not verify"}</h3>
      <ul className="claims">
        <ClaimCard view={claimView(kind, claim, app().config)} />
      </ul>
    </section>
  );
}
