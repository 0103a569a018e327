/**
 * One decision per request (docs/architecture.md#one-request-one-decision): which page this is,
 * whether its refresh is granted, whether everything it shows is already known, and whether it
 * arrives whole or streams. Made once, here, and read by the layout (the JSON-LD in the head), the
 * page's metadata and the page itself.
 */
import "server-only";
import { headers } from "next/headers";
import { cache } from "react";
import type { StagedEntity } from "@/lib/resolver";
import type { SearchResponse } from "@/lib/result/record";
import { streamsTo } from "./clients";
import { fromHeader, isAnswer, pageOf, URL_HEADER, type Page } from "./pages";
import { app } from "./server";

/**
 * How a page's results arrive:
 * - `whole`: every claim settled before the first byte, the JSON-LD in the head. For every client
 *   when everything is already cached, and for every client but an interactive browser always.
 * - `stream`: a browser on a cold page gets the shell at once, then the entity, then each claim as it
 *   settles; the JSON-LD follows in the body.
 */
export type Delivery =
  | { mode: "whole"; response: SearchResponse }
  | { mode: "stream"; entity: Promise<StagedEntity> }
  | { mode: "stream"; response: Promise<SearchResponse> };

export type PageRequest = {
  page: Page | null;
  /** `?refresh=1` asked, and whether the rate limit granted it. */
  refresh: { asked: boolean; granted: boolean };
  /** The results of an entity or lookup page; null for the form, an error page, or any other page. */
  delivery: Delivery | null;
};

/** This request's decision, made once however many components ask. */
export const pageRequest = cache(async (): Promise<PageRequest> => {
  const h = await headers();
  const url = fromHeader(h.get(URL_HEADER));
  const page = url ? pageOf(url.pathname, url.searchParams) : null;
  const asked = url?.searchParams.get("refresh") === "1";
  if (!isAnswer(page)) return { page, refresh: { asked, granted: false }, delivery: null };
  const { resolver, refresh: limit } = app();
  const granted = asked && limit(h).ok;
  const query = page.query;
  const known = granted ? null : await resolver.peek(query);
  let delivery: Delivery;
  if (known) delivery = { mode: "whole", response: known };
  else if (!streamsTo(h.get("user-agent"))) delivery = { mode: "whole", response: await resolver.resolve(query, { refresh: granted }) };
  else if (query.kind === "property_id" || query.kind === "credential_id")
    delivery = { mode: "stream", response: resolver.resolve(query, { refresh: granted }) };
  else delivery = { mode: "stream", entity: resolver.resolveEntityStaged(query.domain, { refresh: granted }) };
  return { page, refresh: { asked, granted }, delivery };
});

/** The results whose JSON-LD goes in the document head: those of a whole page, none for a streamed one. */
export async function headResults() {
  const { delivery } = await pageRequest();
  return delivery?.mode === "whole" ? delivery.response.results : [];
}
