import type { Metadata } from "next";
import { IndexResults } from "@/components/index-results";
import { Results } from "@/components/results";
import { RefreshRefused, SearchForm } from "@/components/search-form";
import { RefusalNotice } from "@/components/refusal-notice";
import { indexSearched, pageRequest, type IndexSearched } from "@/web/page-request";

export async function generateMetadata(): Promise<Metadata> {
  const { page } = await pageRequest();
  const q =
    page?.kind === "lookup"
      ? page.query.input
      : page?.kind === "index-search"
        ? page.text
        : page?.kind === "bad-query"
          ? page.q.trim()
          : "";
  return { title: q ? `Search: ${q.slice(0, 80)}` : "Search", robots: { index: false, follow: true } };
}

/**
 * `/search?q=`: the results of a lookup for an identifier, a search of the index for other text
 * (docs/decisions.md#search), or the form again with the reason.
 */
export default async function SearchPage() {
  const { page, refresh, delivery } = await pageRequest();
  if (page?.kind === "index-search") return <IndexSearchPage text={page.text} cursor={page.cursor} searched={indexSearched()} />;
  if (page?.kind !== "lookup" || !delivery) {
    // proxy.ts answers this page with HTTP 400.
    return (
      <div className="search-page">
        <h1>Search</h1>
        <SearchForm
          value={page?.kind === "bad-query" ? page.q : ""}
          error={page?.kind === "bad-query" ? page.message : "The query is empty"}
        />
      </div>
    );
  }
  return (
    <div className="search-page">
      <SearchForm value={page.query.input} compact />
      <h1 className="results-title">
        Results for <q>{page.query.input}</q>
      </h1>
      {refresh.asked && !refresh.granted ? <RefreshRefused /> : null}
      <Results delivery={delivery} />
    </div>
  );
}

/** A search of the index, as the server ran it before this page (web/server.ts): what it found, or why not. */
function IndexSearchPage({ text, cursor, searched }: { text: string; cursor: string | null; searched: IndexSearched }) {
  if ("refused" in searched) {
    return (
      <div className="search-page">
        <SearchForm value={text} compact />
        <RefusalNotice refusal={searched.refused} headingLevel={1} />
      </div>
    );
  }
  const found = searched.found;
  return (
    <div className="search-page">
      <SearchForm value={text} compact />
      <h1 className="results-title">
        Entities matching <q>{text}</q>
      </h1>
      {found ? (
        <IndexResults page={found} cursor={cursor} />
      ) : (
        <p className="notice" role="status">
          The index cannot be searched just now. Lookups of a domain or an identifier still work.
        </p>
      )}
    </div>
  );
}
