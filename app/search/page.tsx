import type { Metadata } from "next";
import { EntityResultCard, StagedEntityResult } from "@/components/entity-result";
import { RefreshRefused, SearchForm } from "@/components/search-form";
import { parseQuery } from "@/lib/protocol/ids";
import { searchPageKey } from "@/web/page-key";
import { pageRefresh, resultsInHead, search, stagedEntity } from "@/web/server";

type Params = { searchParams: Promise<Record<string, string | string[] | undefined>> };

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? "";

export async function generateMetadata({ searchParams }: Params): Promise<Metadata> {
  const q = first((await searchParams).q).trim();
  return { title: q ? `Search: ${q.slice(0, 80)}` : "Search", robots: { index: false, follow: true } };
}

export default async function SearchPage({ searchParams }: Params) {
  const params = await searchParams;
  const q = first(params.q);
  const parsed = parseQuery(q);
  if (!parsed.ok) {
    // proxy.ts answers this page with HTTP 400.
    return (
      <div className="search-page">
        <h1>Search</h1>
        <SearchForm value={q} error={parsed.message} />
      </div>
    );
  }
  const refreshAsked = first(params.refresh) === "1";
  const refresh = await pageRefresh(refreshAsked);
  const inHead = await resultsInHead(searchPageKey(q), refreshAsked);
  const jsonLd = !inHead;
  const query = parsed.query;
  return (
    <div className="search-page">
      <SearchForm value={query.input} compact />
      <h1 className="results-title">
        Results for <q>{query.input}</q>
      </h1>
      {refreshAsked && !refresh ? <RefreshRefused /> : null}
      {query.kind === "property_id" || query.kind === "credential_id" ? (
        <ClaimQuery q={query.input} refresh={refresh} kind={query.kind === "property_id" ? "property" : "credential"} jsonLd={jsonLd} />
      ) : (
        <StagedEntityResult staged={await stagedEntity(query.domain, refresh)} known={inHead?.[0]} jsonLd={jsonLd} />
      )}
    </div>
  );
}

async function ClaimQuery({ q, refresh, kind, jsonLd }: { q: string; refresh: boolean; kind: "property" | "credential"; jsonLd: boolean }) {
  const out = await search(q, refresh);
  if (!out.ok) return <p role="alert">{out.error.message}</p>;
  const { response } = out;
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
        <EntityResultCard key={r.entity.domain} result={r} focusKind={kind} jsonLd={jsonLd} />
      ))}
    </>
  );
}
