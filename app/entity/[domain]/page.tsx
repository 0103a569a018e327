import type { Metadata } from "next";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import { StagedEntityResult } from "@/components/entity-result";
import { SearchForm } from "@/components/search-form";
import { isCrawler } from "@/lib/crawlers";
import { clip } from "@/lib/ident/display";
import { isDomain } from "@/lib/ident/ids";
import { mayRefresh, publicUrl, stagedEntity } from "@/lib/server";
import { entityView } from "@/lib/view";

type Params = { params: Promise<{ domain: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

async function domainOf(params: Params["params"]): Promise<string> {
  const raw = decodeURIComponent((await params).domain);
  if (!isDomain(raw)) notFound();
  return raw.toLowerCase();
}

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  const domain = await domainOf(params);
  const view = entityView(...(await stagedEntity(domain, false).then((s) => [s.entity, s.cache] as const)));
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
  const h = await headers();
  const crawler = isCrawler(h.get("user-agent"));
  // A crawler never forces a re-fetch, so it shares the layout's resolution (its JSON-LD is in the head).
  const refresh = !crawler && (await searchParams).refresh === "1" && mayRefresh(h).ok;
  const staged = await stagedEntity(domain, refresh);
  if (crawler) await staged.result;
  return (
    <div className="entity-page">
      <SearchForm compact />
      <StagedEntityResult staged={staged} headingLevel={1} linkToPage={false} jsonLd={!crawler} />
    </div>
  );
}
