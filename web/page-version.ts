/**
 * The version of a page the page cache keeps (docs/decisions.md#page-cache): what its row of the route
 * table (web/routes.ts, `version`) says its copy is current against.
 */
import type { ConfiguredResolver } from "ident-resolver/setup";
import { HOME_FRESH_MS, HOME_ISSUERS, HOME_LATEST } from "./home";
import type { PageVersion } from "./page-cache";
import { isAnswer } from "./pages";
import { probeOnce } from "./probe";
import type { Route } from "./routes";

/** How long the first page of an issuer's credentials, as its version read it, stands: a change shows within this. */
export const ISSUED_FRESH_MS = 5_000;

/**
 * What moves the version of `route`'s page before its `until`: for an answer, the document cache's
 * generation (any document kept or dropped); for the home and issuer pages, nothing. They are read
 * from the index and stand on their `until` alone, so that lookups filling the document cache do not
 * make each visit read the index again, behind the lookups' writes (docs/decisions.md#the-home-page).
 */
export const versionGeneration = (resolver: Pick<ConfiguredResolver, "generation">, route: Route): number =>
  route.row.version === "answer" ? resolver.generation() : 0;

/**
 * What an entity or lookup page shows, as text: the resolver's whole answer from the cache alone; null
 * when a document it needs is not cached, or for a refresh, and the page is rendered afresh. Two equal
 * versions render the same page: nothing else a page shows depends on the request. The home page's is
 * what it shows of the index, standing a few seconds (docs/decisions.md#the-home-page); an issuer's
 * first page's, the credentials it lists, as long (a later page is rendered each time: a crawler
 * walking a long list would fill the cache with pages read once).
 */
export async function pageVersion(
  resolver: Pick<ConfiguredResolver, "store" | "probe">,
  route: Route,
): Promise<PageVersion | string | null> {
  const page = route.target.kind === "page" ? route.target.page : null;
  if (route.row.version === "overview") {
    // Served from the store however busy the lookups keep Next (docs/decisions.md#outbound-work);
    // worked out again at most every few seconds, whatever the traffic.
    const store = await resolver.store;
    const shown = store ? await store.overview(HOME_LATEST, HOME_ISSUERS).catch(() => null) : null;
    // Its times are said relative to now ("3 minutes ago"): rendered again each minute at least.
    return { text: JSON.stringify({ shown, minute: Math.floor(Date.now() / 60_000) }), until: Date.now() + HOME_FRESH_MS };
  }
  if (route.row.version === "issued") {
    if (page?.kind !== "issuer" || page.cursor !== null) return null;
    const store = await resolver.store;
    const issued = store ? await store.issuedBy(page.domain).catch(() => null) : null;
    if (issued === null) return null;
    // Its times are said relative to now, as the home page's are.
    return { text: JSON.stringify({ issued, minute: Math.floor(Date.now() / 60_000) }), until: Date.now() + ISSUED_FRESH_MS };
  }
  if (route.row.version !== "answer" || !isAnswer(page) || route.url.searchParams.has("refresh")) return null;
  // Asked once for the request: admission takes this answer (web/probe.ts).
  const probed = await probeOnce(resolver, page.query);
  return probed.state === "cached" ? { text: JSON.stringify(probed.response), until: probed.until } : null;
}
