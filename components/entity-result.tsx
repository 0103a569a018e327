import { Suspense } from "react";
import type { Claim, EntityResult } from "@/lib/result/record";
import type { StagedEntity } from "@/lib/resolver";
import { settledNow } from "@/web/settled";
import { claimView, entityView } from "@/lib/present/view";
import { ClaimCard } from "./claim-card";
import { ClaimGroup, fromClaims, fromStaged } from "./claim-group";
import { EntityHeader } from "./entity-header";
import { JsonLd } from "./json-ld";

type Props = { headingLevel?: 1 | 2; linkToPage?: boolean };

/** One entity whose claims stream in as their publishers answer; rendered whole when already known. */
export async function StagedEntityResult({
  staged,
  known,
  headingLevel = 2,
  linkToPage = true,
  jsonLd = true,
}: Props & { staged: StagedEntity; known?: EntityResult; jsonLd?: boolean }) {
  const sub = headingLevel === 1 ? 2 : 3;
  // Known already (the layout waited for it): no extra tick, so the page is in the first flush.
  const done = known ?? (await settledNow(staged.result));
  const slots = (kind: "properties" | "credentials" | "connections") => (done ? fromClaims(done[kind]) : fromStaged(staged[kind]));
  return (
    <article className="result" data-testid="result" data-domain={staged.entity.domain}>
      <EntityHeader view={entityView(staged.entity, done?.cache ?? staged.cache)} headingLevel={headingLevel} linkToPage={linkToPage} />
      <ClaimGroup kind="property" slots={slots("properties")} headingLevel={sub} />
      <ClaimGroup kind="credential" slots={slots("credentials")} headingLevel={sub} />
      <ClaimGroup kind="connection" slots={slots("connections")} headingLevel={sub} />
      {jsonLd ? (
        <Suspense fallback={null}>
          <JsonLd result={done ?? staged.result} />
        </Suspense>
      ) : null}
    </article>
  );
}

/** One entity already resolved (property and credential queries), with the claim the query was about first. */
export function EntityResultCard({ result, focusKind, jsonLd = true }: { result: EntityResult; focusKind: "property" | "credential"; jsonLd?: boolean }) {
  return (
    <article className="result" data-testid="result" data-domain={result.entity.domain}>
      <EntityHeader view={entityView(result.entity, result.cache)} />
      {result.focus ? <Focus claim={result.focus} kind={focusKind} /> : null}
      <ClaimGroup kind="property" slots={fromClaims(result.properties)} />
      <ClaimGroup kind="credential" slots={fromClaims(result.credentials)} />
      <ClaimGroup kind="connection" slots={fromClaims(result.connections)} />
      {jsonLd ? <JsonLd result={result} /> : null}
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
