/**
 * A refusal as the client sees it (docs/architecture.md#traffic): the one place that turns a
 * {@link Refusal} into an HTTP status, `Retry-After`, the JSON error body and the words a page or the
 * CLI shows. Pages, the API, the re-check route, the CLI and the production server all use it.
 */
import { z } from "zod";
import { REFUSAL_KINDS, type Refusal, type RefusalKind } from "./refusal.ts";

/** The words of each refusal: a heading, and what it means for the person reading it. */
export const REFUSAL_WORDS: Record<RefusalKind, { status: 429 | 503; heading: string; meaning: string }> = {
  query_budget: {
    status: 429,
    heading: "This lookup has fetched as much as one lookup may",
    meaning: "One lookup has started all the fetches one lookup may.",
  },
  host_budget: {
    status: 429,
    heading: "This site has had enough requests for now",
    meaning: "This resolver has sent this site as many requests as it sends one site in a minute.",
  },
  address_budget: {
    status: 429,
    heading: "This site's host has had enough requests for now",
    meaning: "This resolver has sent the server behind this site as many requests as it sends one address in a minute.",
  },
  client_share: {
    status: 429,
    heading: "You have had your share of this site for now",
    meaning: "Your lookups have had the share of this resolver's requests to one site or server that one client may have in a minute.",
  },
  busy: {
    status: 503,
    heading: "This resolver is busy",
    meaning: "This resolver is fetching as much as it may at once just now.",
  },
  local_fault: {
    status: 503,
    heading: "This resolver could not fetch just now",
    meaning: "This resolver ran short of something of its own (connections or memory).",
  },
  cold_lookups: {
    status: 429,
    heading: "Too many lookups for now",
    meaning: "You have started as many lookups that fetch from publishers as one client may in a minute.",
  },
  refreshes: {
    status: 429,
    heading: "Too many fresh checks for now",
    meaning: "You have asked for as many fresh checks as one client may in a minute.",
  },
  connections: {
    status: 429,
    heading: "Too many connections",
    meaning: "You have as many connections open to this resolver as one client may.",
  },
  searches: {
    status: 429,
    heading: "Too many searches for now",
    meaning: "You have searched the index as many times as one client may in a minute.",
  },
  searches_in_progress: {
    status: 429,
    heading: "Too many searches at once",
    meaning: "You have as many searches of the index in progress as one client may at once.",
  },
  search_busy: {
    status: 503,
    heading: "The index is busy",
    meaning: "This resolver is searching its index as much as it may at once just now.",
  },
  store_reads: {
    status: 429,
    heading: "Too many reads of the index for now",
    meaning: "You have read this resolver's index (badges, feeds, searches, its changes) as often as one client may in a minute.",
  },
  lookups_in_progress: {
    status: 429,
    heading: "Too many lookups at once",
    meaning: "You have as many lookups in progress as one client may at once.",
  },
  subscriptions: {
    status: 429,
    heading: "You hold as many subscriptions as one client may",
    meaning: "You hold as many webhooks and WebSub subscriptions of this resolver as one client may; delete one first.",
  },
  subscribes: {
    status: 429,
    heading: "Too many subscription requests for now",
    meaning: "You have made, tested or deleted as many subscriptions as one client may in a minute.",
  },
};

/** How long a client past its own per-minute lookups waits for its refusal: a loop of them then costs it time, not this server's CPU. */
export const OVER_LIMIT_DELAY_MS = 1000;

/** The JSON error body of a refusal: `code` as before, plus which limit and when to ask again. */
export const RefusalBody = z.object({
  error: z.object({
    code: z.enum(["rate_limited", "busy"]),
    message: z.string(),
    refused: z.enum(REFUSAL_KINDS),
    retry_after_s: z.number().int().min(1),
  }),
});
export type RefusalBody = z.infer<typeof RefusalBody>;

export type RefusalAnswer = {
  status: 429 | 503;
  /** Retry-After, and no-store: a refusal is about this moment. */
  headers: { "Retry-After": string; "Cache-Control": "no-store" };
  body: RefusalBody;
  heading: string;
  /** The refusal's own words, as a sentence, with when to try again. */
  message: string;
};

/** Turns a refusal into what the client is answered. */
export function answerRefusal(refusal: Refusal): RefusalAnswer {
  const words = REFUSAL_WORDS[refusal.refused];
  const retryAfterS = Math.max(1, refusal.retryAfterS);
  const message = sentence(refusal.message);
  return {
    status: words.status,
    headers: { "Retry-After": String(retryAfterS), "Cache-Control": "no-store" },
    body: {
      error: { code: words.status === 429 ? "rate_limited" : "busy", message, refused: refusal.refused, retry_after_s: retryAfterS },
    },
    heading: words.heading,
    message,
  };
}

/** A refusal's words as a sentence: a capital first (unless they start with a host name, said as it is) and a full stop. */
function sentence(text: string): string {
  const trimmed = text.trim();
  const first = HOST_FIRST.test(trimmed) ? trimmed.charAt(0) : trimmed.charAt(0).toUpperCase();
  return `${first}${trimmed.slice(1)}${trimmed.endsWith(".") ? "" : "."}`;
}
const HOST_FIRST = /^[a-z0-9-]+(?:\.[a-z0-9-]+)+(?:\s|$)/;
