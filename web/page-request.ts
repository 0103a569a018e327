/**
 * What a page reads of its request (docs/architecture.md#one-request-one-decision): which page it
 * is, whether it was taken on and its refresh granted, and how its results arrive: all decided once
 * by the server before Next ran (web/server.ts), and read here from the request's context
 * (web/request-context.ts) by the layout (the JSON-LD in the head), the page's metadata and the page.
 */
import "server-only";
import type { IndexSearch } from "ident-resolver/store";
import { refusal, type Refusal } from "ident-resolver/traffic";
import type { Refused } from "./delivery";
import { isAnswer } from "./pages";
import type { Page } from "./routes";
import type { PageRequest, RequestContext } from "./decision";
import { requestContext } from "./request-context";

export type { Delivery, Refused } from "./delivery";

/** What a page shows when the server's word did not reach it: nothing is fetched. */
const NOT_ADMITTED = refusal("busy", "this page was not admitted; try again", 1);

/**
 * This request's page and its results, as the server decided them: worked out once per request and
 * shared by the layout, the metadata and the page (web/request-context.ts keeps it).
 */
export function pageRequest(): Promise<PageRequest> {
  const context = requestContext();
  if (!context) return decided(null);
  context.read ??= decided(context);
  return context.read;
}

async function decided(context: RequestContext | null): Promise<PageRequest> {
  const target = context?.route.target;
  const page = target?.kind === "page" ? target.page : null;
  const asked = context?.route.url.searchParams.get("refresh") === "1";
  if (!isAnswer(page)) return { page, refresh: { asked, granted: false }, delivery: null };
  const admission = context?.admission;
  if (!admission?.ok || !context?.delivery) {
    const refused = admission && !admission.ok ? admission.refused : NOT_ADMITTED;
    return { page, refresh: { asked, granted: false }, delivery: { mode: "refused", refused } };
  }
  return { page, refresh: admission.refresh, delivery: await context.delivery };
}

/** The results whose JSON-LD goes in the document head: those of a whole page, none for a streamed one. */
export async function headResults() {
  const { delivery } = await pageRequest();
  return delivery?.mode === "whole" ? delivery.response.results : [];
}

/** Whether this page is an entity's own page, whose JSON-LD is a ProfilePage (docs/decisions.md#json-ld). */
export async function isProfilePage(): Promise<boolean> {
  return (await pageRequest()).page?.kind === "entity";
}

/** The URL of this request; null outside one. */
export function requestUrl(): URL | null {
  return requestContext()?.route.url ?? null;
}

/** The page this request is; null outside one. */
export function requestPage(): Page | null {
  const target = requestContext()?.route.target;
  return target?.kind === "page" ? target.page : null;
}

/**
 * What `/check` may do (docs/publishing.md#check): refused, a live check when the refresh limit
 * granted one, or the report of the cached answer otherwise.
 */
export function checkAdmission(): Refused | { live: boolean; client: string } {
  const admission = requestContext()?.admission;
  if (!admission) return { refused: NOT_ADMITTED };
  if (!admission.ok) return { refused: admission.refused };
  return { live: admission.refresh.granted, client: admission.client };
}

/** What the server's search of the index found for this page (web/server.ts): its refusal, or the page of results (none when the index could not be read). */
export type IndexSearched = { refused: Refusal } | { found: IndexSearch | null | undefined };

export function indexSearched(): IndexSearched {
  const context = requestContext();
  const admission = context?.admission;
  if (admission && !admission.ok) return { refused: admission.refused };
  return { found: context?.searched };
}

/** This response's CSP nonce, which an inline script needs. */
export function requestNonce(): string | undefined {
  return requestContext()?.nonce;
}
