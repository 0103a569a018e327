/**
 * Which clients get a streamed page (docs/architecture.md#one-request-one-decision). An interactive
 * browser gets the shell at once and each claim as it settles; every other client (crawlers,
 * link-preview fetchers, command-line and library clients, headless browsers) gets the whole page in
 * one piece, with the JSON-LD in the document head: most of them do not run the script that places a
 * streamed boundary. Bots are told by `isbot`, a maintained list of crawler and tool User-Agents.
 */
import { isbot } from "isbot";

/** What a person's browser says first; programs rarely claim it, and isbot catches the bots that do. */
const BROWSER_RE = /^Mozilla\/5\.0 \(.*\b(?:Chrome|Firefox|Safari|Edg|OPR)\/\d/;

export function streamsTo(userAgent: string | null): boolean {
  return userAgent !== null && BROWSER_RE.test(userAgent) && !isbot(userAgent);
}
