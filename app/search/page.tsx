import type { Metadata } from "next";
import { Results } from "@/components/results";
import { RefreshRefused, SearchForm } from "@/components/search-form";
import { pageRequest } from "@/web/page-request";

export async function generateMetadata(): Promise<Metadata> {
  const { page } = await pageRequest();
  const q = page?.kind === "lookup" ? page.query.input : page?.kind === "bad-query" ? page.q.trim() : "";
  return { title: q ? `Search: ${q.slice(0, 80)}` : "Search", robots: { index: false, follow: true } };
}

/** `/search?q=`: the results of a lookup, or the form again with the reason (docs/decisions.md#interfaces). */
export default async function SearchPage() {
  const { page, refresh, delivery } = await pageRequest();
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
