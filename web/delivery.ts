/**
 * How an answer page's results arrive; a cold page's started the moment the proxy admits it
 * (docs/decisions.md#cold-pages): Next reaches the page itself 4–11 ms later, and every one of those
 * milliseconds is the header's. The proxy parks the started delivery under a token it
 * relays to the page (as it relays the admission); the page takes it, or starts the same delivery
 * itself when there is none to take. The decision is the one of web/page-request.ts either way.
 */
import { randomUUID } from "node:crypto";
import type { StagedEntity } from "../lib/resolver";
import type { SearchResponse } from "../lib/result/record";
import type { ConfiguredResolver } from "../lib/setup";
import { isRefusal, type Refusal } from "../lib/traffic";
import { streamsTo } from "./clients";
import type { Page } from "./pages";

/** A lookup declined (docs/architecture.md#traffic), before or after the page was taken on: shown in words where the results would be. */
export type Refused = { refused: Refusal };

/**
 * How a page's results arrive:
 * - `whole`: every claim settled before the first byte, the JSON-LD in the head. For every client
 *   when everything is already cached, and for every client but an interactive browser always.
 * - `stream`: a browser on a cold page gets the shell at once, then the entity, then each claim as it
 *   settles; the JSON-LD follows in the body.
 * - `refused`: the lookup was declined (docs/architecture.md#traffic).
 */
export type Delivery =
  | { mode: "whole"; response: SearchResponse }
  | { mode: "stream"; entity: Promise<StagedEntity | Refused> }
  | { mode: "stream"; response: Promise<SearchResponse | Refused> }
  | ({ mode: "refused" } & Refused);

/** An admitted page's admission, as the proxy relays it (web/admission.ts). */
export type Admitted = { refresh: { asked: boolean; granted: boolean }; known: boolean; client: string };

/** A refusal, kept apart from an answer. */
const declined = <T extends object>(answer: T | Refusal): T | Refused => (isRefusal(answer) ? { refused: answer } : answer);

/** The results of the admitted answer `page` for a client saying `userAgent`, started now. */
export async function startDelivery(
  resolver: Pick<ConfiguredResolver, "peek" | "remember" | "resolve" | "resolveEntityStaged">,
  page: Page & { kind: "entity" | "lookup" },
  admitted: Admitted,
  userAgent: string | null,
): Promise<Delivery> {
  const query = page.query;
  const opts = { refresh: admitted.refresh.granted, client: admitted.client };
  const cached = admitted.known ? await resolver.peek(query) : null;
  // Annotated from the index as a lookup's answer would be (docs/decisions.md#the-index).
  const known = cached && (await resolver.remember(cached));
  if (known) return { mode: "whole", response: known };
  if (!streamsTo(userAgent)) {
    const answer = await resolver.resolve(query, opts);
    return isRefusal(answer) ? { mode: "refused", refused: answer } : { mode: "whole", response: answer };
  }
  if (query.kind === "property_id" || query.kind === "credential_id")
    return { mode: "stream", response: resolver.resolve(query, opts).then(declined) };
  return { mode: "stream", entity: resolver.resolveEntityStaged(query.domain, opts).then(declined) };
}

/** The request header that carries a parked delivery's token from the proxy to the page; the proxy always overwrites it. */
export const DELIVERY_HEADER = "x-ident-delivery";

/**
 * Request headers with which Next answers without rendering the page (router state, prefetches): no
 * page would take what the proxy started for them.
 */
const NOT_RENDERED = ["rsc", "next-router-state-tree", "next-router-prefetch", "next-router-segment-prefetch"];

/**
 * In the proxy, for an admitted answer page: starts its results and parks them; the token to relay
 * to the page, or null when the page starts its own. Only a cold page gains from it, and only a request Next renders has a page to take it: a method other
 * than GET or HEAD, an RSC or prefetch request, or a page whose answer is cached or being fetched
 * already is left to the page, as is one past the parking's room.
 */
export async function startEarly(
  deps: { resolver: Parameters<typeof startDelivery>[0]; deliveries: Deliveries },
  request: { method: string; url: URL; headers: Headers },
  page: Page & { kind: "entity" | "lookup" },
  admitted: Admitted & { starts: boolean },
): Promise<string | null> {
  if (!admitted.starts || (request.method !== "GET" && request.method !== "HEAD")) return null;
  if (request.url.searchParams.has("_rsc") || NOT_RENDERED.some((name) => request.headers.has(name))) return null;
  if (deps.deliveries.full()) return null;
  return deps.deliveries.park(startDelivery(deps.resolver, page, admitted, request.headers.get("user-agent")));
}

/** Marks a promise handled: what a page takes, it awaits (web/settle.ts); what none takes must not be an unhandled rejection. */
const handled = (promise: Promise<unknown>) => void promise.catch(() => {});

/** Every promise of a delivery handled, as far down as its claims. */
function quiet(delivery: Promise<Delivery>): void {
  handled(
    delivery.then((d) => {
      if (d.mode !== "stream") return;
      if ("response" in d) return handled(d.response);
      handled(
        d.entity.then((staged) => {
          if ("refused" in staged) return;
          handled(staged.result);
          for (const slot of [...staged.properties, ...staged.credentials, ...staged.connections]) handled(slot.result);
        }),
      );
    }),
  );
}

/**
 * Deliveries the proxy started, until their page takes them (Next reaches it 4–15 ms later). One
 * whose page never comes (its client went away meanwhile) is dropped after `keepMs`; its lookup,
 * admitted and counted as any other, goes on and is recorded. At most `max` are kept (the requests
 * an instance holds at once); past it, pages start their own.
 */
export function createDeliveries(options: { max: number; keepMs?: number }) {
  const keepMs = options.keepMs ?? 5000;
  const parked = new Map<string, { delivery: Promise<Delivery>; timer: ReturnType<typeof setTimeout> }>();
  return {
    full: () => parked.size >= options.max,
    park(delivery: Promise<Delivery>): string {
      const token = randomUUID();
      quiet(delivery);
      const timer = setTimeout(() => parked.delete(token), keepMs);
      timer.unref();
      parked.set(token, { delivery, timer });
      return token;
    },
    /** The delivery parked under `token`, once: a second take, or an unknown token, finds nothing. */
    take(token: string | null): Promise<Delivery> | undefined {
      const entry = token === null ? undefined : parked.get(token);
      if (!entry || token === null) return undefined;
      clearTimeout(entry.timer);
      parked.delete(token);
      return entry.delivery;
    },
    get size() {
      return parked.size;
    },
  };
}
export type Deliveries = ReturnType<typeof createDeliveries>;
