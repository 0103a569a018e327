import { Suspense } from "react";
import type { Claim, EntityResult } from "@/lib/ident/result";
import type { StagedEntity } from "@/lib/resolver";
import { claimView, entityView } from "@/lib/view";
import { ClaimCard } from "./claim-card";
import { ClaimGroup, fromClaims, fromStaged } from "./claim-group";
import { EntityHeader } from "./entity-header";
import { JsonLd } from "./json-ld";

type Props = { headingLevel?: 1 | 2; linkToPage?: boolean };

/** The full result if it settles before the next macrotask (every document cached), else null. */
async function settledNow(result: Promise<EntityResult>): Promise<EntityResult | null> {
  return Promise.race([result, new Promise<null>((resolve) => setTimeout(() => resolve(null), 0))]);
}

/** One entity whose claims stream in as their publishers answer; rendered whole when already known. */
export async function StagedEntityResult({ staged, headingLevel = 2, linkToPage = true }: Props & { staged: StagedEntity }) {
  const sub = headingLevel === 1 ? 2 : 3;
  const done = await settledNow(staged.result);
  if (done) {
    return (
      <article className="result" data-testid="result" data-domain={done.entity.domain}>
        <EntityHeader view={entityView(done.entity, done.cache)} headingLevel={headingLevel} linkToPage={linkToPage} />
        <ClaimGroup kind="property" slots={fromClaims(done.properties)} headingLevel={sub} />
        <ClaimGroup kind="credential" slots={fromClaims(done.credentials)} headingLevel={sub} />
        <ClaimGroup kind="connection" slots={fromClaims(done.connections)} headingLevel={sub} />
        <JsonLd result={done} />
      </article>
    );
  }
  return (
    <article className="result" data-testid="result" data-domain={staged.entity.domain}>
      <EntityHeader view={entityView(staged.entity, staged.cache)} headingLevel={headingLevel} linkToPage={linkToPage} />
      <ClaimGroup kind="property" slots={fromStaged(staged.properties)} headingLevel={sub} />
      <ClaimGroup kind="credential" slots={fromStaged(staged.credentials)} headingLevel={sub} />
      <ClaimGroup kind="connection" slots={fromStaged(staged.connections)} headingLevel={sub} />
      <Suspense fallback={null}>
        <JsonLd result={staged.result} />
      </Suspense>
    </article>
  );
}

/** One entity already resolved (property and credential queries), with the claim the query was about first. */
export function EntityResultCard({ result, focusKind }: { result: EntityResult; focusKind: "property" | "credential" }) {
  return (
    <article className="result" data-testid="result" data-domain={result.entity.domain}>
      <EntityHeader view={entityView(result.entity, result.cache)} />
      {result.focus ? <Focus claim={result.focus} kind={focusKind} /> : null}
      <ClaimGroup kind="property" slots={fromClaims(result.properties)} />
      <ClaimGroup kind="credential" slots={fromClaims(result.credentials)} />
      <ClaimGroup kind="connection" slots={fromClaims(result.connections)} />
      <JsonLd result={result} />
    </article>
  );
}

function Focus({ claim, kind }: { claim: Claim; kind: "property" | "credential" }) {
  return (
    <section className="focus" aria-label="The claim you searched for" data-testid="focus" data-verified={claim.verified}>
      <h3>{claim.verified ? "This claim verifies" : "This claim does not verify"}</h3>
      <ul className="claims">
        <ClaimCard view={claimView(kind, claim)} />
      </ul>
    </section>
  );
}
