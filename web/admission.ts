/**
 * Whether this instance takes on a lookup now (docs/decisions.md#outbound-work): decided once per
 * request, before the first byte, for the pages (proxy.ts) and the API alike. A lookup the cache can
 * answer, or one that joins a fetch already running, is always taken. A cold one (it starts a fetch)
 * counts against its client's cold-lookup limit, and is refused when the outbound queue is full or
 * when the host it asks about has spent its budget for the minute.
 */
import { z } from "zod";
import type { NotFetched } from "@/lib/fetch/refusal";
import type { Query } from "@/lib/protocol/ids";
import type { SearchResponse } from "@/lib/result/record";
import type { App } from "./server";

/** Why a lookup is not taken on, with its HTTP status and when to ask again. */
export type Refusal = {
  status: 429 | 503;
  code: "rate_limited" | "busy";
  message: string;
  retryAfterS: number;
};

export type Admission =
  | {
      ok: true;
      /** `?refresh=1` asked, and whether its own limit granted it. */
      refresh: { asked: boolean; granted: boolean };
      /** The answer from the cache alone, when it had every document. */
      known: SearchResponse | null;
    }
  | { ok: false; refusal: Refusal };

/** How long a client past its cold-lookup limit waits for its 429. */
export const OVER_LIMIT_DELAY_MS = 1000;

/** Decides whether `query` is taken on for the client of `forwardedFor` (X-Forwarded-For), and takes its tokens if so. */
export async function admit(app: App, query: Query, forwardedFor: string | null, refreshAsked: boolean): Promise<Admission> {
  const client = app.clientOf(forwardedFor);
  const granted = refreshAsked && (await app.refreshLimit.take(client)).ok;
  if (refreshAsked && !granted) app.resolver.metrics.refusals.inc({ limit: "refresh" });
  const refuse = (refusal: Refusal, limit: string): Admission => {
    app.resolver.metrics.refusals.inc({ limit });
    return { ok: false, refusal };
  };
  const refresh = { asked: refreshAsked, granted };
  if (!granted) {
    const probed = await app.resolver.probe(query);
    if (probed.state === "cached") return { ok: true, refresh, known: probed.response };
    // Joining a fetch already running starts nothing new.
    if (probed.state === "joining") return { ok: true, refresh, known: null };
  }
  const { outbound, hostBudget } = app.resolver.traffic;
  if (outbound.full()) {
    const retryAfterS = outbound.retryAfterS;
    const message = `This resolver is fetching as much as it may at once (${app.config.maxOutbound} documents, with a full queue). Try again in ${retryAfterS} s.`;
    return refuse({ status: 503, code: "busy", message, retryAfterS }, "busy");
  }
  const host = await hostBudget.check(query.domain);
  if (!host.ok) {
    const message = `${query.domain} has had the ${app.config.hostBudgetPerMin} requests a minute this resolver sends to one site. Try again in ${host.retryAfterS} s.`;
    return refuse({ status: 429, code: "rate_limited", message, retryAfterS: host.retryAfterS }, "host_budget");
  }
  const cold = await app.coldLimit.take(client);
  if (!cold.ok) {
    // A client past its limit waits a second for the refusal: a loop of lookups then costs it time,
    // not this server's CPU (a refusal takes about as long to render as `/`).
    await new Promise((resolve) => setTimeout(resolve, OVER_LIMIT_DELAY_MS));
    const message = `You have started ${app.config.coldLookupsPerMin} lookups that had to fetch from publishers this minute, as many as one client may. Lookups of what is already cached still work. Try again in ${cold.retryAfterS} s.`;
    return refuse({ status: 429, code: "rate_limited", message, retryAfterS: cold.retryAfterS }, "cold");
  }
  return { ok: true, refresh, known: null };
}

/** The refusal for work declined after the lookup was taken on (its own document's host, a full queue, a local fault). */
export function refusalOf(err: NotFetched): Refusal {
  const status = err.kind === "host_budget" ? 429 : 503;
  return { status, code: status === 429 ? "rate_limited" : "busy", message: sentence(err.message), retryAfterS: err.retryAfterS };
}

const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}${text.endsWith(".") ? "" : "."}`;

/** The request header that relays the proxy's admission to the page; the proxy always overwrites it. */
export const ADMISSION_HEADER = "x-ident-admission";

/** What a page needs of its admission: the refresh decision, whether the cache knew everything, or the refusal. */
const Relayed = z.union([
  z.object({ refresh: z.object({ asked: z.boolean(), granted: z.boolean() }), known: z.boolean() }),
  z.object({
    refusal: z.object({
      status: z.union([z.literal(429), z.literal(503)]),
      code: z.enum(["rate_limited", "busy"]),
      message: z.string(),
      retryAfterS: z.number(),
    }),
  }),
]);
export type Relayed = z.infer<typeof Relayed>;

export const relay = (admission: Admission): string =>
  encodeURIComponent(
    JSON.stringify(admission.ok ? { refresh: admission.refresh, known: admission.known !== null } : { refusal: admission.refusal }),
  );

/** The relayed admission, or null when the header is missing or not one the proxy wrote. */
export function relayed(value: string | null): Relayed | null {
  if (value === null) return null;
  try {
    const parsed = Relayed.safeParse(JSON.parse(decodeURIComponent(value)));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
