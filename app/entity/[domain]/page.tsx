import type { Metadata } from "next";
import { Suspense } from "react";
import { RecheckNotice, Timeline } from "@/components/timeline";
import { notFound } from "next/navigation";
import { NOTHING_HERE_METADATA, NothingHere } from "@/components/nothing-here";
import { Results } from "@/components/results";
import { Share } from "@/components/share";
import { Follow } from "@/components/follow";
import { RefreshRefused, SearchForm } from "@/components/search-form";
import { cleanText, clip } from "ident-resolver/present";
import { entityView } from "ident-resolver/present";
import type { EntityResult } from "ident-resolver";
import { pageRequest, requestUrl, type Delivery } from "@/web/page-request";
import { claimCounts } from "ident-resolver";
import { entityPreviewPath, previewAlt, previewImage } from "@/web/preview-image";
import { app } from "@/web/app";
import { FAILED, orFailure } from "@/web/settle";

/** The entity this page is about, as far as it is known before its claims settle; null when the lookup was declined. */
async function entityOf(): Promise<Pick<EntityResult, "entity" | "cache"> | null> {
  const { page, delivery } = await pageRequest();
  if (page?.kind !== "entity" || !delivery) notFound();
  if (delivery.mode === "refused") return null;
  if (delivery.mode === "whole") {
    const result = delivery.response.results[0];
    if (!result) notFound();
    return result;
  }
  if ("entity" in delivery) {
    // A failed lookup is said in the page (web/settle.ts, logged there); the metadata is the declined one's.
    const staged = await orFailure(delivery.entity, "an entity's metadata", () => {});
    return staged === FAILED || "refused" in staged ? null : staged;
  }
  notFound();
}

/** The claims' count of this page's entity when its page arrives whole; null while they stream in. */
async function settledCounts(): Promise<{ verified: number; total: number } | null> {
  const { delivery } = await pageRequest();
  const result = delivery?.mode === "whole" ? delivery.response.results[0] : undefined;
  return result ? claimCounts(result) : null;
}

export async function generateMetadata(): Promise<Metadata> {
  if ((await pageRequest()).page?.kind === "no-entity") return NOTHING_HERE_METADATA;
  const found = await entityOf();
  if (found === null) return { title: "Try again shortly", robots: { index: false, follow: false } };
  const { entity, cache } = found;
  const view = entityView(entity, cache, app().config);
  const domain = entity.domain;
  const accepted = view.status === "accepted";
  // Plain text with nothing to isolate it: bidi controls removed (docs/decisions.md#rendering).
  const title = accepted ? `${clip(cleanText(view.name, "inline"), 70)} (${domain})` : domain;
  const description = clip(
    cleanText(
      view.description ?? (accepted ? `The verified identity published by ${domain}.` : `${domain}: ${view.statusText}.`),
      "inline",
    ),
    200,
  );
  const url = new URL(`/entity/${domain}`, app().config.publicUrl).href;
  const alt = previewAlt(title, view.status, view.statusText, await settledCounts());
  const image = previewImage(entityPreviewPath(domain), app().config.publicUrl, alt);
  return {
    title,
    description,
    // docs/api.md#feeds: the entity's changes of verdict, for feed readers.
    alternates: { canonical: url, types: { "application/atom+xml": [{ url: `${url}/feed.xml`, title: `Changes of ${domain}` }] } },
    robots: { index: accepted, follow: true },
    // docs/decisions.md#crawlers: the entity's own image, drawn from the cache alone.
    openGraph: { title, description, url, type: "profile", siteName: "ident resolver", images: [image] },
    twitter: { card: "summary_large_image", title, description, images: [image] },
  };
}

/** Once this page's own check is in the index, whatever it was. */
function settled(delivery: Delivery): Promise<unknown> {
  if (delivery.mode !== "stream") return Promise.resolve();
  return "entity" in delivery ? delivery.entity.then((staged) => ("refused" in staged ? null : staged.result)) : delivery.response;
}

/** `/entity/{domain}`: the canonical, shareable page of one entity (docs/decisions.md#interfaces). */
export default async function EntityPage() {
  const { page, refresh, delivery } = await pageRequest();
  // A path that is not a domain: 404, decided by the server (web/routes.ts), said here in server HTML.
  if (page?.kind === "no-entity") return <NothingHere />;
  if (page?.kind !== "entity" || !delivery) notFound();
  return (
    <div className="entity-page">
      <SearchForm compact />
      {refresh.asked && !refresh.granted ? <RefreshRefused /> : null}
      <RecheckNotice domain={page.query.domain} url={requestUrl()} />
      <Results delivery={delivery} headingLevel={1} linkToPage={false} />
      {/* A whole page has no Suspense boundary: nothing in it waits for a script (components/results.tsx). */}
      {delivery.mode === "stream" ? (
        <Suspense fallback={null}>
          <Timeline domain={page.query.domain} settled={settled(delivery)} />
          <Share domain={page.query.domain} settled={settled(delivery)} />
          <Follow topicPath={`/entity/${page.query.domain}/feed.xml`} what={page.query.domain} />
        </Suspense>
      ) : (
        <>
          <Timeline domain={page.query.domain} settled={settled(delivery)} />
          <Share domain={page.query.domain} settled={settled(delivery)} />
          <Follow topicPath={`/entity/${page.query.domain}/feed.xml`} what={page.query.domain} />
        </>
      )}
    </div>
  );
}
