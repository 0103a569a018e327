import { Suspense } from "react";
import type { SearchResponse } from "ident-resolver";
import type { Delivery, Refused } from "@/web/page-request";
import { EntityResultView, StreamedEntityResult } from "./entity-result";
import { LoadingCard } from "./loading-card";
import { RefusalNotice } from "./refusal-notice";
import { app } from "@/web/app";
import { FAILED, orFailure } from "@/web/settle";
import { StreamFailure } from "./stream-failure";

type Layout = { headingLevel?: 1 | 2; linkToPage?: boolean };

/**
 * The results of an entity or lookup page, as this request's decision says they arrive
 * (web/page-request.ts): whole, with the JSON-LD already in the head; or streamed, with a loading card
 * until the entity document is in and the JSON-LD in the body at the end. A whole page has no
 * Suspense boundary at all, so nothing in it waits for a script to appear.
 */
export function Results({ delivery, ...layout }: Layout & { delivery: Delivery }) {
  if (delivery.mode === "whole") return <ResponseResults response={delivery.response} jsonLd={false} {...layout} />;
  if (delivery.mode === "refused") return <RefusalNotice refusal={delivery.refused} headingLevel={layout.headingLevel} />;
  return (
    <Suspense fallback={<LoadingCard />}>
      {"entity" in delivery ? (
        <StreamedEntityResult staged={delivery.entity} {...layout} />
      ) : (
        <StreamedResponse response={delivery.response} {...layout} />
      )}
    </Suspense>
  );
}

async function StreamedResponse({ response, ...layout }: Layout & { response: Promise<SearchResponse | Refused> }) {
  const settled = await orFailure(response, "a lookup", app().log.error);
  if (settled === FAILED) return <StreamFailure what="This lookup" />;
  if ("refused" in settled) return <RefusalNotice refusal={settled.refused} headingLevel={layout.headingLevel} />;
  return <ResponseResults response={settled} jsonLd {...layout} />;
}

/** A settled answer: one entity, or every owner of a property or the holder of a credential. */
function ResponseResults({ response, jsonLd, ...layout }: Layout & { response: SearchResponse; jsonLd: boolean }) {
  const kind = response.query.kind === "property_id" ? "property" : response.query.kind === "credential_id" ? "credential" : null;
  if (kind === null) {
    const [result] = response.results;
    return result ? <EntityResultView result={result} jsonLd={jsonLd} {...layout} /> : null;
  }
  return (
    <>
      {response.problems.length > 0 ? (
        <ul className="query-problems" data-testid="query-problems">
          {response.problems.map((p, i) => (
            <li key={i} className={p.severity}>
              {p.message}
            </li>
          ))}
        </ul>
      ) : null}
      {response.results.length === 0 ? <p className="empty">No entity could be found for this {kind}.</p> : null}
      {kind === "property" && response.results.length > 0 ? (
        <p className="muted">
          {response.results.length} owner{response.results.length === 1 ? "" : "s"} listed; each verifies on its own.
        </p>
      ) : null}
      {response.results.map((r) => (
        <EntityResultView key={r.entity.domain} result={r} focusKind={kind} jsonLd={jsonLd} />
      ))}
    </>
  );
}
