/**
 * How an answer page's results arrive (docs/architecture.md#one-request-one-decision): decided once,
 * as soon as the server has classified and admitted the request (web/server.ts), so a cold page's
 * fetches start before Next reaches the page; the page reads the same decision from its context.
 */
import type { StagedEntity } from "ident-resolver";
import type { SearchResponse } from "ident-resolver";
import type { ConfiguredResolver } from "ident-resolver/setup";
import { isRefusal, type Refusal } from "ident-resolver/traffic";
import { streamsTo } from "./clients";
import type { Page } from "./routes";

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

/** What a page's results need of its admission (web/admission.ts, `Admission` in web/decision.ts). */
export type Admitted = {
  /** `?refresh=1` asked, and whether its own limit granted it. */
  refresh: { asked: boolean; granted: boolean };
  /** The answer from the cache alone, when it had every document. */
  cached: SearchResponse | null;
  /** The client the lookup is for (the key of its share of an address's minute). */
  client: string;
};

/** A refusal, kept apart from an answer. */
const declined = <T extends object>(answer: T | Refusal): T | Refused => (isRefusal(answer) ? { refused: answer } : answer);

/**
 * The results of the admitted answer `page` for a client saying `userAgent`, started now. Every
 * promise in it is handled at once: a page whose client went away never takes them, and its lookup,
 * admitted and counted as any other, goes on and is recorded.
 */
export function startDelivery(
  resolver: Pick<ConfiguredResolver, "remember" | "resolve" | "resolveEntityStaged">,
  page: Page & { kind: "entity" | "lookup" },
  admitted: Admitted,
  userAgent: string | null,
): Promise<Delivery> {
  const delivery = deliver(resolver, page, admitted, userAgent);
  handleAll(delivery);
  return delivery;
}

async function deliver(
  resolver: Pick<ConfiguredResolver, "remember" | "resolve" | "resolveEntityStaged">,
  page: Page & { kind: "entity" | "lookup" },
  admitted: Admitted,
  userAgent: string | null,
): Promise<Delivery> {
  const query = page.query;
  const opts = { refresh: admitted.refresh.granted, client: admitted.client };
  // Annotated from the index as a lookup's answer would be (docs/decisions.md#the-index).
  const remembered = admitted.cached && (await resolver.remember(admitted.cached, admitted.client));
  if (remembered) return { mode: "whole", response: remembered };
  if (!streamsTo(userAgent)) {
    const answer = await resolver.resolve(query, opts);
    return isRefusal(answer) ? { mode: "refused", refused: answer } : { mode: "whole", response: answer };
  }
  if (query.kind === "property_id" || query.kind === "credential_id")
    return { mode: "stream", response: resolver.resolve(query, opts).then(declined) };
  return { mode: "stream", entity: resolver.resolveEntityStaged(query.domain, opts).then(declined) };
}

/** Marks a promise handled: what a page takes, it awaits (web/settle.ts); what none takes must not be an unhandled rejection. */
const handled = (promise: Promise<unknown>) => void promise.catch(() => {});

/** Every promise of a delivery handled, as far down as its claims. */
function handleAll(delivery: Promise<Delivery>): void {
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
