import type { Metadata } from "next";
import { CheckReportView } from "@/components/check-report";
import { CopyButton } from "@/components/copy-button";
import { EntityResultView } from "@/components/entity-result";
import { RefusalNotice } from "@/components/refusal-notice";
import { checkDomain, reportOf } from "ident-resolver/check";
import type { CheckReport } from "ident-resolver/check";
import { isRefusal, type Refusal } from "ident-resolver/traffic";
import { checkAdmission, requestPage } from "@/web/page-request";
import { app } from "@/web/app";

export async function generateMetadata(): Promise<Metadata> {
  const page = requestPage();
  const title = page?.kind === "check" ? `Check ${page.query.domain}` : "Check a site";
  // A publisher's tool, not an answer for crawlers.
  return { title, robots: { index: false, follow: false } };
}

function CheckForm({ value = "", error }: { value?: string; error?: string }) {
  return (
    <form action="/check" method="get" className="search search-compact" data-testid="check-form">
      <label htmlFor="check-q" className="search-label">
        Check a site you publish
      </label>
      <div className="search-row">
        <input
          id="check-q"
          name="q"
          type="text"
          defaultValue={value}
          required
          maxLength={512}
          autoComplete="off"
          spellCheck={false}
          placeholder="your-domain.example"
          aria-describedby={error ? "check-q-error" : "check-q-help"}
          aria-invalid={error ? true : undefined}
        />
        <button type="submit">Check</button>
      </div>
      {error ? (
        <p id="check-q-error" className="search-error" role="alert">
          {error}
        </p>
      ) : (
        <p id="check-q-help" className="muted">
          Fetches your entity document and every document it points to now, and says exactly what to change, on which site. The same check
          runs offline before you publish: <code>npx ident check ./ident.json</code>.
        </p>
      )}
    </form>
  );
}

type Outcome = { report: CheckReport; live: boolean } | { refused: Refusal };

async function run(domain: string): Promise<Outcome> {
  const admitted = checkAdmission();
  if ("refused" in admitted) return admitted;
  const { resolver, config } = app();
  const settings = { fetchTimeoutMs: config.fetchTimeoutMs };
  // Within its limit, a fresh check; past it, the report of the cached answer, said as such.
  const checked = admitted.live
    ? await checkDomain(resolver, domain, settings, admitted.client)
    : await resolver.resolveEntity(domain, { client: admitted.client });
  if (isRefusal(checked)) return { refused: checked };
  return { report: "entity" in checked ? reportOf(checked, settings) : checked, live: admitted.live };
}

/** `/check?q={domain}`: the publisher's check as a page (docs/publishing.md#check). */
export default async function CheckPage() {
  const page = requestPage();
  if (page?.kind !== "check") {
    return (
      <div className="check-page">
        <h1>Check a site</h1>
        <CheckForm value={page?.kind === "bad-check" ? page.q : ""} error={page?.kind === "bad-check" ? page.message : undefined} />
        <p>
          What each reason means: <a href="/reasons">the catalogue of reasons</a>. Schemas for editors:{" "}
          <a href="/schemas/entity.json">entity</a>, <a href="/schemas/property.json">property</a>,{" "}
          <a href="/schemas/credential.json">credential</a>.
        </p>
      </div>
    );
  }
  const domain = page.query.domain;
  const outcome = await run(domain);
  return (
    <div className="check-page">
      <h1>
        Check of <bdi>{domain}</bdi>
      </h1>
      <CheckForm value={domain} />
      {"refused" in outcome ? (
        <RefusalNotice refusal={outcome.refused} />
      ) : (
        <>
          {outcome.live ? null : (
            <p className="notice" role="status" data-testid="check-cached">
              You have asked for as many fresh checks as one client may this minute: this report is of the last check, fetched at{" "}
              {outcome.report.result?.cache.fetched_at}. Reload in a minute for a fresh one.
            </p>
          )}
          <CheckReportView report={outcome.report} />
          {outcome.report.result ? (
            <section aria-labelledby="card-title" className="check-card">
              <h2 id="card-title">The card, as a lookup shows it</h2>
              <EntityResultView result={outcome.report.result} jsonLd={false} headingLevel={2} linkToPage />
              <h2 id="jsonld-title">The JSON-LD, as a lookup puts it in the page head</h2>
              {outcome.report.result.jsonld ? (
                <div className="snippet">
                  <pre role="region" aria-labelledby="jsonld-title" tabIndex={0} data-testid="check-jsonld">
                    <code>{JSON.stringify(outcome.report.result.jsonld, null, 2)}</code>
                  </pre>
                  <CopyButton text={JSON.stringify(outcome.report.result.jsonld, null, 2)} label="Copy the JSON-LD" />
                </div>
              ) : (
                <p>None: an entity that is not accepted has no JSON-LD.</p>
              )}
            </section>
          ) : null}
        </>
      )}
    </div>
  );
}
