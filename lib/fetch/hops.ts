/**
 * One document fetched hop by hop (docs/decisions.md#fetching), for the fetchers that request with
 * something other than undici (./portable.ts over `node:https`, ./web-fetch.ts over a given `fetch`):
 * each hop's URL checked, redirects followed by hand up to the limit, any status but 200 not found,
 * the body read within the cap. The caller keeps the deadline and says what an error means.
 */
import type { FetchFailed, FetchFound, FetchMeta } from "./outcome.ts";
import { checkTarget, failedOutcome, REDIRECTS } from "./target.ts";

/** One response, as the hops need it, whatever made it. `read` throws a FetchStop past the cap. */
export type HopAnswer = {
  status: number;
  contentType: string | null;
  location: string | null;
  discard(): void | Promise<void>;
  read(cap: number): Promise<Uint8Array>;
};

/** A fetch in progress: its facts so far, and when it started. */
export type HopRun = { meta: FetchMeta; started: number };

export const newHopRun = (url: string): HopRun => ({
  meta: { url, finalUrl: url, httpStatus: null, contentType: null },
  started: performance.now(),
});

/** Follows `run.meta.url` to its document, asking `get` for each hop. */
export async function followHops(
  run: HopRun,
  cap: number,
  maxRedirects: number,
  get: (url: URL) => Promise<HopAnswer>,
): Promise<FetchFound | FetchFailed> {
  let current: URL;
  try {
    current = new URL(run.meta.url);
  } catch {
    return failedOutcome(run.meta, run.started, "blocked", `${run.meta.url} is not a URL`);
  }
  for (let hop = 0; ; hop++) {
    const refused = checkTarget(current);
    if (refused) return failedOutcome(run.meta, run.started, "blocked", `${current.href}: ${refused}`);
    run.meta.finalUrl = current.href;
    const res = await get(current);
    run.meta.httpStatus = res.status;
    run.meta.contentType = res.contentType;
    if (REDIRECTS.has(res.status) && res.location) {
      await res.discard();
      if (hop >= maxRedirects) return failedOutcome(run.meta, run.started, "blocked", `more than ${maxRedirects} redirects`);
      try {
        current = new URL(res.location, current);
      } catch {
        return failedOutcome(run.meta, run.started, "blocked", "redirect to an invalid URL");
      }
      continue;
    }
    if (res.status !== 200) {
      await res.discard();
      return failedOutcome(run.meta, run.started, "not_found", `${current.href} answered HTTP ${res.status}`);
    }
    const bytes = await res.read(cap);
    const body = new TextDecoder("utf-8").decode(bytes); // strips a UTF-8 BOM (docs/decisions.md#fetching)
    const ms = Math.round(performance.now() - run.started);
    return Object.assign({}, run.meta, {
      ok: true as const,
      status: "found" as const,
      httpStatus: 200 as const,
      body,
      bytes: bytes.byteLength,
      ms,
    });
  }
}
