/**
 * What a fetch is and what it answers, whatever fetches (docs/decisions.md#fetching): the guarded
 * fetcher (./fetcher.ts), the one over `node:https` (./portable.ts), the one over a `fetch` a library
 * user brings (./web-fetch.ts), and every layer over them (the cache, the fetch thread, the fleet's
 * shared documents) speak these words.
 */
import type { Priority } from "../traffic/outbound.ts";
import type { FetchRefusal } from "../traffic/refusal.ts";

/** What is fetched: a JSON document or an HTML page (fallback or rel=me). */
export type FetchMode = "json" | "html";

/** Outcomes of one fetch (docs/decisions.md#fetching). */
export type FailureStatus = "not_found" | "unreachable" | "timeout" | "too_large" | "blocked";

/** A fetch's facts so far, carried into its outcome. */
export type FetchMeta = {
  /** The URL asked for. */
  url: string;
  /** The URL of the last hop. */
  finalUrl: string;
  httpStatus: number | null;
  contentType: string | null;
};

export type FetchFound = FetchMeta & { ok: true; status: "found"; httpStatus: 200; body: string; bytes: number; ms: number };
/** `message` is in plain words; `detail`, when there is one, is the library's own (docs/decisions.md#reasons). */
export type FetchFailed = FetchMeta & { ok: false; status: FailureStatus; message: string; detail?: string; ms: number };
export type FetchOutcome = FetchFound | FetchFailed;

/** Whose fetch it is: a person's or background work, and the client it is for (`background` for the crawler). */
export type FetchOptions = {
  priority?: Priority;
  client?: string;
};

/**
 * A document fetcher; the resolver is built from one. It answers every outcome of the publisher's
 * side, and a {@link FetchRefusal} for work this resolver declined or could not do.
 */
export type Fetcher = (url: string, mode: FetchMode, options?: FetchOptions) => Promise<FetchOutcome | FetchRefusal>;
