/**
 * Whether this instance takes on a lookup now (docs/architecture.md#traffic): decided once per
 * request, before the first byte, for the pages (web/server.ts), the API and the re-check alike. A lookup
 * the cache can answer, or one that joins a fetch already running, is always taken. A cold one (it
 * starts a fetch) counts against its client's `coldLookups`, and is refused when the outbound queue
 * is full or when the host it asks about has spent its minute (`hostPerMinute`).
 */
import type { Query } from "ident-resolver";
import type { ConfiguredResolver } from "ident-resolver/setup";
import { OVER_LIMIT_DELAY_MS } from "ident-resolver/traffic";
import { hostSpent, refusedAt } from "ident-resolver/traffic";
import { isRefusal, type Refusal } from "ident-resolver/traffic";
import { takeProbe } from "./probe";
import { requestContext } from "./request-context";
import type { Admission } from "./decision";
import type { RouteRow } from "./routes";

/**
 * What admission needs: the resolver's cache probe, its limits and metrics. Its client is the
 * request's, decided once by the server (web/server.ts, {@link currentClient}): nothing here reads
 * X-Forwarded-For again.
 */
export type AdmissionDeps = {
  resolver: Pick<ConfiguredResolver, "probe" | "traffic" | "metrics">;
  /** The client of an X-Forwarded-For (lib/traffic/client.ts): here only for {@link currentClient} outside a request. */
  clientOf(forwardedFor: string | null): string;
  /** The client's lookups in progress, this one included (web/shed.ts); without it, none but this one. */
  lookupsInProgress?(client: string): number;
  /** The client's requests in progress, every kind together (web/shed.ts), for the search queue's fairness. */
  requestsInProgress?(client: string): number;
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The client of the request being answered, as the server decided it once (web/server.ts: the
 * request's context); outside a request (a test calling a route's function) the client with no address.
 */
export const currentClient = (deps: Pick<AdmissionDeps, "clientOf">): string => requestContext()?.client ?? deps.clientOf(null);

/**
 * Decides whether `query` is taken on for `client`, and takes its tokens if so. A refresh asked for and not granted is a refusal (`refreshes`) when `refreshRequired`
 * (the API and the re-check); a page shows what is known instead.
 */
export async function admit(
  deps: AdmissionDeps,
  query: Query,
  client: string,
  refreshAsked: boolean,
  refreshRequired = false,
): Promise<Admission> {
  const { resolver } = deps;
  const { windows, settings, outbound } = resolver.traffic;
  const refuse = async (refused: Refusal, share = false): Promise<Admission> => {
    resolver.metrics.refusals.inc({ limit: refused.refused });
    // A client past its own limit (or its share of the instance, docs/architecture.md#fair-queues) waits for
    // its refusal: a loop of lookups then costs it time, not this server's CPU.
    if (refused.refused === "cold_lookups" || share) await pause(OVER_LIMIT_DELAY_MS);
    return { ok: false, refused };
  };
  const asked = refreshAsked ? await windows.refreshes.take(client) : null;
  const granted = asked?.ok === true;
  if (asked && !asked.ok) {
    const refused = refusedAt(
      "refreshes",
      `you have asked for the ${settings.refreshes} fresh checks a minute one client may; try again in ${asked.retryAfterS} s`,
      asked.retryAfterS,
    );
    if (refreshRequired) return refuse(refused);
    resolver.metrics.refusals.inc({ limit: "refreshes" });
  }
  const refresh = { asked: refreshAsked, granted };
  if (!granted) {
    // The request's one question to the resolver, when the page cache asked it already (web/probe.ts).
    const probed = await takeProbe(resolver, query);
    if (probed.state === "cached") return { ok: true, refresh, cached: probed.response, client, starts: false };
    // Joining a fetch already running starts nothing new.
    if (probed.state === "joining") return { ok: true, refresh, cached: null, client, starts: false };
  }
  // docs/architecture.md#fair-queues: a client with other lookups in progress is refused first, a quarter of the queue before one with none.
  const others = Math.max(0, (deps.lookupsInProgress?.(client) ?? 1) - 1);
  if (outbound.full(others)) {
    const why =
      others === 0
        ? `this resolver is fetching as much as it may at once (${settings.outbound} documents, with a full queue); try again in ${outbound.retryAfterS} s`
        : `this resolver is fetching nearly as much as it may at once, and keeps the rest for clients with no lookup in progress (you have ${others} more); try again in ${outbound.retryAfterS} s`;
    return refuse(refusedAt("outboundQueue", why, outbound.retryAfterS), others > 0);
  }
  const host = await windows.hostPerMinute.check(query.domain);
  if (!host.ok) {
    return refuse(hostSpent(query.domain, settings, host.retryAfterS));
  }
  const cold = await windows.coldLookups.take(client);
  if (!cold.ok) {
    const why = `you have started the ${settings.coldLookups} lookups a minute that fetch from publishers one client may; lookups of what is already cached still work; try again in ${cold.retryAfterS} s`;
    return refuse(refusedAt("coldLookups", why, cold.retryAfterS));
  }
  return { ok: true, refresh, cached: null, client, starts: true };
}

/** What a lookup's admission is asked, given by the handler that read it: its query and the refresh asked. */
export type LookupAsked = {
  query: Query;
  refresh: boolean;
  /** A refresh asked and not granted is a refusal (`refreshes`): the API and the re-check; a page shows what is known instead. */
  refreshRequired: boolean;
};

/** A lookup taken on, and on what terms. */
export type LookupTaken = Admission & { ok: true };

/** A request admitted as its row says: the lookup's terms for a lookup's row, null for any other; or its refusal. */
export type RowAdmission = { ok: true; lookup: LookupTaken | null } | { ok: false; refused: Refusal };

/**
 * A request admitted as its route's row says (`admission`, web/routes.ts), the one way every route
 * takes it, pages, feeds, the API and the re-check alike: nothing, a search of the index
 * (`searches`), or a lookup ({@link admit}; the check always asks a refresh). The handler gives what
 * a lookup asks, once it has read it; whether anything is asked is the row's word, not the handler's.
 */
export async function admitAs(
  deps: AdmissionDeps,
  admission: RouteRow["admission"],
  client: string,
  lookup: LookupAsked | null,
): Promise<RowAdmission> {
  if (admission === null) return { ok: true, lookup: null };
  if (admission === "search") {
    const taken = await admitSearch(deps, client);
    return taken.ok ? { ok: true, lookup: null } : taken;
  }
  if (lookup === null) throw new Error(`admission: a ${admission} was given no query to admit`);
  const refresh = admission === "check" || lookup.refresh;
  const admitted = await admit(deps, lookup.query, client, refresh, lookup.refreshRequired);
  return admitted.ok ? { ok: true, lookup: admitted } : admitted;
}

/**
 * Whether a search of the index is taken on for `client` (`searches`, pages and
 * `/api/search` together); a refused client waits a second for its refusal, as for lookups.
 */
async function admitSearch(deps: AdmissionDeps, client: string): Promise<{ ok: true } | { ok: false; refused: Refusal }> {
  const { resolver } = deps;
  const { windows, settings } = resolver.traffic;
  const taken = await windows.searches.take(client);
  if (taken.ok) return { ok: true };
  const refused = refusedAt(
    "searches",
    `you have made the ${settings.searches} searches of the index a minute one client may; lookups of a domain or an identifier still work; try again in ${taken.retryAfterS} s`,
    taken.retryAfterS,
  );
  resolver.metrics.refusals.inc({ limit: refused.refused });
  await pause(OVER_LIMIT_DELAY_MS);
  return { ok: false, refused };
}

/**
 * Runs a read of the index that counts as a search (a search, a sitemap, a feed) in its turn
 * (docs/architecture.md#traffic: `searchesAtOnce`, `searchesInProgress`), or answers the refusal.
 * A refused search waits a second for its refusal, as for lookups: a client that asks again at once,
 * whatever Retry-After says, asks once a second, not as fast as the refusals come back.
 */
export async function inSearchTurn<T>(deps: AdmissionDeps, client: string, task: () => Promise<T>): Promise<T | Refusal> {
  const { resolver } = deps;
  const done = await resolver.traffic.searches.run(client, task, () => deps.requestsInProgress?.(client) ?? 0);
  return isRefusal(done) ? refusedLate(deps, done) : done;
}

/** A refusal counted and answered a second late (a search the instance cannot run now: {@link inSearchTurn}). */
async function refusedLate<R extends Refusal>(deps: AdmissionDeps, refused: R): Promise<R> {
  deps.resolver.metrics.refusals.inc({ limit: refused.refused });
  await pause(OVER_LIMIT_DELAY_MS);
  return refused;
}
