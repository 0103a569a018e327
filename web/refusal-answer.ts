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
import { BADGE_TYPE, refusalBadge } from "./badge";
import { PROFILES, type Profile } from "./routes";
import { xml } from "./xml";

export type RefusalAnswer = { status: number; headers: Record<string, string>; body: string };

/** The answer to `refused` in `profile`'s form, with `limits` (the client's RateLimit headers). */
export function refusalAnswer(profile: Profile, refused: Refusal, limits: Readonly<Record<string, string>>): RefusalAnswer {
  const answer = answerRefusal(refused);
  const { answers, cors } = PROFILES[profile];
  const body = {
    json: () => JSON.stringify(answer.body),
    svg: () => refusalBadge(answer.heading),
    html: () =>
      `<!doctype html><html lang="en"><meta charset="utf-8"><title>Try again shortly</title><h1>${xml(answer.heading)}</h1><p>${xml(answer.message)}</p><p><a href="/">Back to the search</a></p></html>`,
  }[answers]();
  const type = { json: "application/json", svg: BADGE_TYPE, html: "text/html; charset=utf-8" }[answers];
  return {
    status: answer.status,
    headers: Object.assign({}, answer.headers, cors ? CORS_HEADERS : {}, limits, { "Content-Type": type }),
    body,
  };
}
