/**
 * One decision per request (docs/architecture.md#one-request-one-decision): which page this is,
 * whether it was taken on and its refresh granted (decided by the proxy, web/admission.ts), whether
 * everything it shows is already known, and whether it arrives whole or streams. Made once, here,
 * and read by the layout (the JSON-LD in the head), the page's metadata and the page itself.
 */
import "server-only";
import { headers } from "next/headers";
import { cache } from "react";
import { refusal } from "@/lib/traffic";
import { ADMISSION_HEADER, relayed } from "./admission";
import { DELIVERY_HEADER, startDelivery, type Delivery, type Refused } from "./delivery";
import { fromHeader, isAnswer, pageOf, URL_HEADER, type Page } from "./pages";
import { app } from "./app";

export type { Delivery, Refused } from "./delivery";

export type PageRequest = {
  page: Page | null;
  /** `?refresh=1` asked, and whether the rate limit granted it. */
  refresh: { asked: boolean; granted: boolean };
  /** The results of an entity or lookup page; null for the form, an error page, or any other page. */
  delivery: Delivery | null;
};

/** What a page shows when the proxy's word did not reach it: nothing is fetched. */
const NOT_ADMITTED = refusal("busy", "this page was not admitted; try again", 1);

/** This request's decision, made once however many components ask. */
export const pageRequest = cache(async (): Promise<PageRequest> => {
  const h = await headers();
  const url = fromHeader(h.get(URL_HEADER));
  const page = url ? pageOf(url.pathname, url.searchParams) : null;
  const asked = url?.searchParams.get("refresh") === "1";
  if (!isAnswer(page)) return { page, refresh: { asked, granted: false }, delivery: null };
  // The proxy admitted every answer page before it reached here; without its word, nothing is fetched.
  const admission = relayed(h.get(ADMISSION_HEADER));
  if (admission === null || "refused" in admission) {
    return { page, refresh: { asked, granted: false }, delivery: { mode: "refused", refused: admission?.refused ?? NOT_ADMITTED } };
  }
  // The proxy started this page's results as it admitted it (web/delivery.ts); else they start now.
  const started = app().deliveries.take(h.get(DELIVERY_HEADER));
  const delivery = await (started ?? startDelivery(app().resolver, page, admission, h.get("user-agent")));
  const refresh = admission.refresh;
  return { page, refresh, delivery };
});

/** The results whose JSON-LD goes in the document head: those of a whole page, none for a streamed one. */
export async function headResults() {
  const { delivery } = await pageRequest();
  return delivery?.mode === "whole" ? delivery.response.results : [];
}

/** Whether this page is an entity's own page, whose JSON-LD is a ProfilePage (docs/decisions.md#json-ld). */
export async function isProfilePage(): Promise<boolean> {
  return (await pageRequest()).page?.kind === "entity";
}

/** The URL of this request, as the proxy relayed it; null when it did not. */
export async function requestUrl(): Promise<URL | null> {
  return fromHeader((await headers()).get(URL_HEADER));
}

/**
 * What `/check` may do (docs/publishing.md#check): refused, a live check when the refresh limit
 * granted one, or the report of the cached answer otherwise.
 */
export async function checkAdmission(): Promise<Refused | { live: boolean; client: string }> {
  const admission = relayed((await headers()).get(ADMISSION_HEADER));
  if (admission === null) return { refused: NOT_ADMITTED };
  if ("refused" in admission) return { refused: admission.refused };
  return { live: admission.refresh.granted, client: admission.client };
}
