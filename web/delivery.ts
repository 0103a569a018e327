/**
 * How an answer page's results arrive, started the moment the proxy admits the page
 * (docs/decisions.md#cold-pages): Next reaches the page itself 4–11 ms later, and on a cold page every
 * one of those milliseconds is the header's. The proxy parks the started delivery under a token it
 * relays to the page (as it relays the admission); the page takes it, or starts the same delivery
 * itself when there is none to take. The decision is the one of web/page-request.ts either way.
 *
 * A fetch asks this thread for its budgets before it dials (lib/fetch/thread.ts); were Next already
 * rendering the page's shell, the answer would wait 8–20 ms for it. So the proxy lets a cold page's
 * first fetch have its turn first, {@link FIRST_TURN_MS} at most.
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

/**
 * The results of the admitted answer `page` for a client saying `userAgent`, started now;
 * `onFetchTurn` is called as each fetch they start has its budgets answered.
 */
export async function startDelivery(
  resolver: Pick<ConfiguredResolver, "peek" | "remember" | "resolve" | "resolveEntityStaged">,
  page: Page & { kind: "entity" | "lookup" },
  admitted: Admitted,
  userAgent: string | null,
  onFetchTurn?: () => void,
): Promise<Delivery> {
  const query = page.query;
  const opts = { refresh: admitted.refresh.granted, client: admitted.client, ...(onFetchTurn ? { onFetchTurn } : {}) };
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

/** How long the proxy waits at most for a cold page's first fetch to have its budgets answered. */
export const FIRST_TURN_MS = 10;

/** The request header that carries a parked delivery's token from the proxy to the page; the proxy always overwrites it. */
export const DELIVERY_HEADER = "x-ident-delivery";

/**
 * Deliveries the proxy started, until their page takes them. One whose page never comes (the client
 * went away before Next reached it) is dropped after `keepMs`; its lookup goes on and is recorded,
 * as the page's own would have been.
 */
export function createDeliveries(keepMs = 30_000) {
  const parked = new Map<string, { delivery: Promise<Delivery>; timer: ReturnType<typeof setTimeout> }>();
  return {
    park(delivery: Promise<Delivery>): string {
      const token = randomUUID();
      // Awaited by the page that takes it; a fault with no page to take it is not an unhandled rejection.
      delivery.catch(() => {});
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
