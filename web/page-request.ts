/**
 * One decision per request (docs/architecture.md#one-request-one-decision): which page this is,
 * whether it was taken on and its refresh granted (decided by the proxy, web/admission.ts), whether
 * everything it shows is already known, and whether it arrives whole or streams. Made once, here,
 * and read by the layout (the JSON-LD in the head), the page's metadata and the page itself.
 */
import "server-only";
import { headers } from "next/headers";
import { cache } from "react";
import { NotFetched } from "@/lib/fetch/refusal";
import type { StagedEntity } from "@/lib/resolver";
import type { SearchResponse } from "@/lib/result/record";
import { ADMISSION_HEADER, refusalOf, relayed, type Refusal } from "./admission";
import { streamsTo } from "./clients";
import { fromHeader, isAnswer, pageOf, URL_HEADER, type Page } from "./pages";
import { app } from "./server";

/** Work declined after the page was taken on, shown in words where the results would be. */
export type Refused = { refused: Refusal };

/**
 * How a page's results arrive:
 * - `whole`: every claim settled before the first byte, the JSON-LD in the head. For every client
 *   when everything is already cached, and for every client but an interactive browser always.
 * - `stream`: a browser on a cold page gets the shell at once, then the entity, then each claim as it
 *   settles; the JSON-LD follows in the body.
 * - `refused`: the lookup was declined (docs/decisions.md#outbound-work).
 */
export type Delivery =
  | { mode: "whole"; response: SearchResponse }
  | { mode: "stream"; entity: Promise<StagedEntity | Refused> }
  | { mode: "stream"; response: Promise<SearchResponse | Refused> }
  | ({ mode: "refused" } & Refused);

export type PageRequest = {
  page: Page | null;
  /** `?refresh=1` asked, and whether the rate limit granted it. */
  refresh: { asked: boolean; granted: boolean };
  /** The results of an entity or lookup page; null for the form, an error page, or any other page. */
  delivery: Delivery | null;
};

/** A refusal as a value; any other error stays an error. */
function declined(err: unknown): Refused {
  if (err instanceof NotFetched) return { refused: refusalOf(err) };
  throw err;
}

/** This request's decision, made once however many components ask. */
export const pageRequest = cache(async (): Promise<PageRequest> => {
  const h = await headers();
  const url = fromHeader(h.get(URL_HEADER));
  const page = url ? pageOf(url.pathname, url.searchParams) : null;
  const asked = url?.searchParams.get("refresh") === "1";
  if (!isAnswer(page)) return { page, refresh: { asked, granted: false }, delivery: null };
  // The proxy admitted every answer page before it reached here; without its word, nothing is fetched.
  const admission = relayed(h.get(ADMISSION_HEADER));
  if (admission === null || "refusal" in admission) {
    const refusal = admission?.refusal ?? { status: 503, code: "busy", message: "This page was not admitted.", retryAfterS: 1 };
    return { page, refresh: { asked, granted: false }, delivery: { mode: "refused", refused: refusal } };
  }
  const { resolver } = app();
  const refresh = admission.refresh;
  const query = page.query;
  const opts = { refresh: refresh.granted };
  const cached = admission.known ? await resolver.peek(query) : null;
  // Annotated from the index as a lookup's answer would be (docs/decisions.md#the-index).
  const known = cached && (await resolver.remember(cached));
  let delivery: Delivery;
  if (known) delivery = { mode: "whole", response: known };
  else if (!streamsTo(h.get("user-agent"))) {
    delivery = await resolver.resolve(query, opts).then(
      (response): Delivery => ({ mode: "whole", response }),
      (err) => ({ mode: "refused", ...declined(err) }),
    );
  } else if (query.kind === "property_id" || query.kind === "credential_id") {
    delivery = { mode: "stream", response: resolver.resolve(query, opts).catch(declined) };
  } else delivery = { mode: "stream", entity: resolver.resolveEntityStaged(query.domain, opts).catch(declined) };
  return { page, refresh, delivery };
});

/** The results whose JSON-LD goes in the document head: those of a whole page, none for a streamed one. */
export async function headResults() {
  const { delivery } = await pageRequest();
  return delivery?.mode === "whole" ? delivery.response.results : [];
}

/** The URL of this request, as the proxy relayed it; null when it did not. */
export async function requestUrl(): Promise<URL | null> {
  return fromHeader((await headers()).get(URL_HEADER));
}

/**
 * What `/check` may do (docs/publishing.md#check): refused, a live check when the refresh limit
 * granted one, or the report of the cached answer otherwise.
 */
export async function checkAdmission(): Promise<{ refused: Refusal } | { live: boolean }> {
  const admission = relayed((await headers()).get(ADMISSION_HEADER));
  if (admission === null) return { refused: { status: 503, code: "busy", message: "This page was not admitted.", retryAfterS: 1 } };
  if ("refusal" in admission) return { refused: admission.refusal };
  return { live: admission.refresh.granted };
}
