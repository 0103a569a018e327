/**
 * Every refusal's answer, made in one place (docs/architecture.md#routes, "answer"): the status and
 * Retry-After of `answerRefusal` (lib/traffic/answer.ts), the client's `RateLimit-Policy` and
 * `RateLimit` (web/api-headers.ts), CORS where the route's profile has it, and the body in the form
 * of the route's answers: a page, JSON, or a grey badge. The front door's limits and shedding
 * (web/shed.ts), the server's admission of a read (web/server.ts) and a route handler's turn at the
 * index (web/index-reads.ts) all answer with it; a page refused at admission carries the same
 * headers and is rendered by Next with the refusal's words.
 */
import { answerRefusal, type Refusal } from "ident-resolver/traffic";
import { CORS_HEADERS } from "./api-headers";
import { BADGE_TYPE, refusalBadge } from "./badge-drawing";
import { PROFILES, type Profile } from "./routes";
import { xml } from "./xml";

export type RefusalAnswer = { status: number; headers: Record<string, string>; body: string };

/** The answer to `refused` in `profile`'s form, with `limits` (the client's RateLimit headers). */
export function refusalAnswer(profile: Profile, refused: Refusal, limits: Readonly<Record<string, string>>): RefusalAnswer {
  const answer = answerRefusal(refused);
  return inForm(profile, answer.status, Object.assign({}, answer.headers, limits), {
    json: answer.body,
    heading: answer.heading,
    message: answer.message,
  });
}

/** Why the index could not answer: there is none on this server, or it could not be read just now. */
export type Unavailable = "no index" | "unreadable";
const UNAVAILABLE: Record<Unavailable, { message: string; retryAfterS: number }> = {
  "no index": { message: "The index is not available on this server.", retryAfterS: 60 },
  unreadable: { message: "The index could not be read just now; try again shortly.", retryAfterS: 5 },
};

/**
 * The index failing, in `profile`'s form (docs/architecture.md#routes, "answer"): 503 with
 * Retry-After, and `message` when the route says more than the default. Not a refusal: no limit was
 * met, so no client's RateLimit.
 */
export function unavailableAnswer(profile: Profile, why: Unavailable, message = UNAVAILABLE[why].message): RefusalAnswer {
  const retryAfterS = UNAVAILABLE[why].retryAfterS;
  return inForm(
    profile,
    503,
    { "Retry-After": String(retryAfterS), "Cache-Control": "no-store" },
    { json: { error: { code: "unavailable", message } }, heading: "Index unavailable", message },
  );
}

/** Status, headers and body in the form of `profile`'s answers: JSON, a grey badge, or a short page. */
function inForm(
  profile: Profile,
  status: number,
  headers: Record<string, string>,
  said: { json: unknown; heading: string; message: string },
): RefusalAnswer {
  const { answers, cors } = PROFILES[profile];
  const body = {
    json: () => JSON.stringify(said.json),
    svg: () => refusalBadge(said.heading),
    html: () =>
      `<!doctype html><html lang="en"><meta charset="utf-8"><title>Try again shortly</title><h1>${xml(said.heading)}</h1><p>${xml(said.message)}</p><p><a href="/">Back to the search</a></p></html>`,
  }[answers]();
  const type = { json: "application/json", svg: BADGE_TYPE, html: "text/html; charset=utf-8" }[answers];
  return { status, headers: Object.assign({}, headers, cors ? CORS_HEADERS : {}, { "Content-Type": type }), body };
}
