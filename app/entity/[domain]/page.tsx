import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { StagedEntityResult } from "@/components/entity-result";
import { RefreshRefused, SearchForm } from "@/components/search-form";
import { clip } from "@/lib/present/display";
import { isDomain } from "@/lib/protocol/ids";
import { entityPageKey } from "@/web/page-key";
import { pageRefresh, publicUrl, resultsInHead, stagedEntity } from "@/web/server";
import { entityView } from "@/lib/present/view";

type Params = { params: Promise<{ domain: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

const refreshAsked = async (searchParams: Params["searchParams"]) => {
  const v = (await searchParams).refresh;
  return (Array.isArray(v) ? v[0] : v) === "1";
};

async function domainOf(params: Params["params"]): Promise<string> {
  const raw = decodeURIComponent((await params).domain);
  if (!isDomain(raw)) notFound();
  return raw.toLowerCase();
}

export async function generateMetadata({ params, searchParams }: Params): Promise<Metadata> {
  const domain = await domainOf(params);
  const staged = await stagedEntity(domain, await pageRefresh(await refreshAsked(searchParams)));
  const view = entityView(staged.entity, staged.cache);
  const accepted = view.status === "accepted";
  const title = accepted ? `${clip(view.name, 70)} (${domain})` : domain;
  const description = clip(view.description ?? (accepted ? `The verified identity published by ${domain}.` : `${domain}: ${view.statusText}.`), 200);
  const url = new URL(`/entity/${domain}`, publicUrl()).href;
  return {
    title,
    description,
    alternates: { canonical: url },
    robots: { index: accepted, follow: true },
    openGraph: { title, description, url, type: "profile", siteName: "ident resolver" },
    twitter: { card: "summary", title, description },
  };
}

export default async function EntityPage({ params, searchParams }: Params) {
  const domain = await domainOf(params);
  const asked = await refreshAsked(searchParams);
  const refresh = await pageRefresh(asked);
  const staged = await stagedEntity(domain, refresh);
  const inHead = await resultsInHead(entityPageKey(domain), asked);
  return (
    <div className="entity-page">
      <SearchForm compact />
      {asked && !refresh ? <RefreshRefused /> : null}
      <StagedEntityResult staged={staged} known={inHead?.[0]} headingLevel={1} linkToPage={false} jsonLd={!inHead} />
    </div>
  );
}
