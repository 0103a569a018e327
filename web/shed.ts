/**
 * What the production server refuses before Next (docs/architecture.md#traffic): requests past what
 * the instance may hold in progress (`requestsInInstance`), lookups past `lookupsInInstance`, and a
 * client's lookups past `lookupsInProgress`, where each would cost memory (Next holds about 200 KB per
 * request in progress) and CPU only to be refused later. Health and readiness are never counted here.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { answerRefusal, refusedAt, type Refusal, type TrafficSettings } from "../lib/traffic";
import { OVER_LIMIT_DELAY_MS } from "../lib/traffic/answer";
import { boundFor } from "../lib/traffic/fair";
import { createInProgress } from "../lib/traffic/in-progress";
import { CORS_HEADERS } from "./api-headers";
import { send } from "./response";
import type { Route } from "./routes";
import { xml } from "./xml";

export type ShedDeps = {
  settings: TrafficSettings;
  retryAfterS: () => number;
  clientOf(forwardedFor: string | null): string;
  refused(refusal: Refusal): void;
  /** The rate-limit headers of the API's client (web/api-headers.ts), on an API refusal. */
  apiHeaders?(forwardedFor: string | null): Promise<Record<string, string>>;
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
    /** Counts `req` until its response closes; or the refusal to answer it with, counting nothing. `route` says whether it is a lookup. */
    shed(req: IncomingMessage, res: ServerResponse, route: Route): Shed | null {
      const { settings } = deps;
      const lookup = route.lookup;
      const forwarded = req.headers["x-forwarded-for"];
      const key = deps.clientOf(Array.isArray(forwarded) ? forwarded.join(", ") : (forwarded ?? null));
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
        res.once("close", inProgress.enter(lookup ? ["all", "lookups", client, `requests ${key}`] : ["all", `requests ${key}`]));
        return null;
      }
      // A client past its own limit, or refused for its share of the instance, waits for its refusal (docs/architecture.md#fair-queues).
      const ownFault = refused.refused !== "busy" || (lookup && inProgress.count(client) > 0);
      deps.refused(refused);
      const answer = answerRefusal(refused);
      const api = route.target.kind === "api";
      const write = (apiHeaders: Record<string, string>) =>
        send(req, res, {
          status: answer.status,
          headers: Object.assign({}, answer.headers, api ? CORS_HEADERS : {}, apiHeaders, {
            "Content-Type": api ? "application/json" : "text/html; charset=utf-8",
          }),
          body: api
            ? JSON.stringify(answer.body)
            : `<!doctype html><html lang="en"><meta charset="utf-8"><title>Try again shortly</title><h1>${xml(answer.heading)}</h1><p>${xml(answer.message)}</p><p><a href="/">Back to the search</a></p></html>`,
        });
      return {
        delayMs: ownFault ? OVER_LIMIT_DELAY_MS : 0,
        write() {
          if (res.destroyed) return;
          // The API's refusals carry CORS and the client's limits, as its other answers do (docs/api.md).
          if (api && deps.apiHeaders) {
            const forwardedFor = Array.isArray(forwarded) ? forwarded.join(", ") : (forwarded ?? null);
            void deps.apiHeaders(forwardedFor).then(write, () => write({}));
          } else write({});
        },
      };
    },
  };
}
