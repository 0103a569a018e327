import type { FetchOutcome } from "ident-resolver/node";

/** A JSON document found at `url` (HTTP 200, application/json), as the fetcher answers one. */
export function foundJson(url: string, body: string): FetchOutcome {
  return {
    ok: true,
    status: "found",
    url,
    finalUrl: url,
    httpStatus: 200,
    contentType: "application/json",
    ms: 1,
    body,
    bytes: body.length,
  };
}
