/**
 * What the production server refuses before Next (docs/architecture.md#traffic): requests past what
 * the instance may hold in progress (`requestsInInstance`), lookups past `lookupsInInstance`, and a
 * client's lookups past `lookupsInProgress`, where each would cost memory (Next holds about 200 KB per
 * request in progress) and CPU only to be refused later; and, taken before it is counted in, the
 * per-client limits its route names (`limited`, `Route.limits` of web/routes.ts). Health and
 * readiness are never counted here. The client is the one the server decided for the request (its
 * context's `client`); nothing here reads X-Forwarded-For. Every refusal here is written by one
 * writer, in the form of the route's answers (a page, JSON or a badge).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { refusedAt, type Refusal, type TrafficSettings } from "ident-resolver/traffic";
import { OVER_LIMIT_DELAY_MS } from "ident-resolver/traffic";
import type { RateDecision } from "ident-resolver/traffic";
import { boundFor } from "ident-resolver/traffic";
import { createInProgress } from "ident-resolver/traffic";
import { refusalAnswer } from "./refusal-answer";
import { send } from "./response";
import { REQUEST_LIMIT_WORDS, type RequestLimit, type Route } from "./routes";

export type ShedDeps = {
  settings: TrafficSettings;
  retryAfterS: () => number;
  refused(refusal: Refusal): void;
  /** The client's RateLimit headers (web/api-headers.ts), on every refusal. */
  limitHeaders?(client: string): Promise<Record<string, string>>;
  /** Takes one of a client's `limit` for this minute (lib/traffic: its window, in Redis for a fleet). */
  take(limit: RequestLimit, client: string): Promise<RateDecision>;
};

/** A refusal to write, and how long to wait before writing it (a client past its own limit waits). */
export type Shed = { write(): void; delayMs: number };

export function createShedder(deps: ShedDeps) {
  const inProgress = createInProgress();
  return {
    inProgress,
    /** A client's lookups in progress (the key `client <key>` counted below). */
    lookupsOf: (client: string) => inProgress.count(`client ${client}`),
    /** A client's requests in progress, every kind together (health and readiness aside). */
    requestsOf: (client: string) => inProgress.count(`requests ${client}`),
    /**
     * Counts `req` until its response closes; or the refusal to answer it with, counting nothing.
     * `route` says whether it is a lookup; `key` is its client, decided once by the server (web/server.ts).
     */
    shed(req: IncomingMessage, res: ServerResponse, route: Route, key: string): Shed | null {
      const { settings } = deps;
      const lookup = route.lookup;
      const client = `client ${key}`;
      let refused: Refusal | null = null;
      const full = inProgress.count("all") >= settings.requestsInInstance ? "requestsInInstance" : null;
      // docs/architecture.md#fair-queues: a client with lookups in progress meets the instance's bound a quarter early.
      const lookupsFull =
        lookup && inProgress.count("lookups") >= boundFor(settings.lookupsInInstance, inProgress.count(client))
          ? "lookupsInInstance"
          : null;
      // A client at its own limit is told so first: that is the reason, whatever else is full.
      if (lookup && inProgress.count(client) >= settings.lookupsInProgress) {
        const why = `you have ${settings.lookupsInProgress} lookups in progress, as many as one client may at once; try again when one has finished`;
        refused = refusedAt("lookupsInProgress", why, Math.ceil(OVER_LIMIT_DELAY_MS / 1000));
      } else if (full || lookupsFull) {
        const retry = deps.retryAfterS();
        const why = `this resolver is answering as many requests as it can hold; try again in ${retry} s`;
        refused = refusedAt(full ?? lookupsFull ?? "requestsInInstance", why, retry);
      }
      if (!refused) {
        const leave = inProgress.enter(lookup ? ["all", "lookups", client, `requests ${key}`] : ["all", `requests ${key}`]);
        // A response closed already (its client gone while its limits were taken) will not close again.
        if (res.destroyed || res.closed) leave();
        else res.once("close", leave);
        return null;
      }
      // A client past its own limit, or refused for its share of the instance, waits for its refusal (docs/architecture.md#fair-queues).
      const ownFault = refused.refused !== "busy" || (lookup && inProgress.count(client) > 0);
      return refusalShed(deps, req, res, route, key, refused, ownFault);
    },
    /**
     * The per-client limits `route` names, each taken once for this request; the refusal of the first
     * spent, answered a second late as every client's own limit, or null when all are taken.
     */
    async limited(req: IncomingMessage, res: ServerResponse, route: Route, key: string): Promise<Shed | null> {
      for (const limit of route.limits) {
        const taken = await deps.take(limit, key);
        if (taken.ok) continue;
        const why = REQUEST_LIMIT_WORDS[limit](deps.settings[limit], taken.retryAfterS);
        return refusalShed(deps, req, res, route, key, refusedAt(limit, why, taken.retryAfterS), true);
      }
      return null;
    },
  };
}

/** A refusal made here, written by the one maker of refusals (web/refusal-answer.ts) with the client's limits. */
function refusalShed(
  deps: ShedDeps,
  req: IncomingMessage,
  res: ServerResponse,
  route: Route,
  client: string,
  refused: Refusal,
  ownFault: boolean,
): Shed {
  deps.refused(refused);
  const write = (limits: Record<string, string>) => {
    if (res.destroyed) return;
    const answer = refusalAnswer(route.row.profile, refused, limits);
    send(req, res, { status: answer.status, headers: answer.headers, body: answer.body });
  };
  return {
    delayMs: ownFault ? OVER_LIMIT_DELAY_MS : 0,
    write() {
      if (res.destroyed) return;
      if (deps.limitHeaders) void deps.limitHeaders(client).then(write, () => write({}));
      else write({});
    },
  };
}
