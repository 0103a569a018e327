/**
 * What a badge shows and its SVG (docs/decisions.md#badges), drawn by badge-maker (shields' own
 * library, which measures its text): an entity's, from its standing in the index, and the grey one a
 * refused or failed request is answered with (web/refusal-answer.ts). Serving them is web/badge.ts's.
 */
import { makeBadge } from "badge-maker";
import type { Standing } from "ident-resolver/store";
import { xml } from "./xml";

export const BADGE_TYPE = "image/svg+xml; charset=utf-8";
/** What a badge says on its left. */
export const BADGE_LABEL = "ident";

export type BadgeState = "all-verified" | "some-verified" | "no-claims" | "not-verified" | "unknown";

/** What a badge shows (`message` in shields' named `color`), and `spoken`, its accessible name, which names the domain. */
export type BadgeFacts = { state: BadgeState; message: string; color: string; spoken: string };

/**
 * The badge of `domain` from its standing in the index (null: never recorded): "N of M verified"
 * (brightgreen when all, yellow for half or more, orange for fewer), "no claims" (blue: accepted, with
 * nothing to verify), "not verified" (red: its document is not accepted), "unknown" (lightgrey).
 */
export function badgeFacts(domain: string, standing: Standing | null): BadgeFacts {
  if (standing === null) {
    return { state: "unknown", message: "unknown", color: "lightgrey", spoken: `${domain} is not in this resolver's index` };
  }
  if (standing.status !== "accepted") {
    return {
      state: "not-verified",
      message: "not verified",
      color: "red",
      spoken: `${domain} is not verified (its document is not accepted)`,
    };
  }
  const { verified } = standing;
  const total = verified + standing.unverified;
  if (total === 0) {
    return { state: "no-claims", message: "no claims", color: "blue", spoken: `${domain} is accepted and lists no claims` };
  }
  const all = verified === total;
  return {
    state: all ? "all-verified" : "some-verified",
    message: `${verified} of ${total} verified`,
    color: all ? "brightgreen" : verified * 2 >= total ? "yellow" : "orange",
    spoken: `${domain} has ${verified} of ${total} ${total === 1 ? "claim" : "claims"} verified`,
  };
}

/** What the badge is called, for screen readers and as an image's alt text: "ident: alice.example has 3 of 4 claims verified". */
export const badgeName = (facts: BadgeFacts): string => `${BADGE_LABEL}: ${facts.spoken}`;

/** `text` with `from` replaced by `to`, where `from` occurs exactly once. */
function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`badge: badge-maker's SVG no longer has one ${JSON.stringify(from)}`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/**
 * The SVG of `facts`. badge-maker names the image by its two texts (`role="img"`, `aria-label` and
 * `<title>` "ident: 3 of 4 verified"); that name is replaced by {@link badgeName}, which also says
 * whose badge it is, the domain escaped (web/xml.ts).
 */
export function drawBadge(facts: BadgeFacts): string {
  const svg = makeBadge({ label: BADGE_LABEL, message: facts.message, color: facts.color });
  // The label and messages are plain words and digits: badge-maker's escaping leaves them as they are.
  const plain = `${BADGE_LABEL}: ${facts.message}`;
  const name = xml(badgeName(facts));
  return replaceOnce(
    replaceOnce(svg, `<title>${plain}</title>`, `<title>${name}</title>`),
    `aria-label="${plain}"`,
    `aria-label="${name}"`,
  );
}

/** The badge a refused request is answered (web/shed.ts): "ident: try again", named by the refusal's heading. */
export function refusalBadge(heading: string): string {
  return drawBadge({ state: "unknown", message: "try again", color: "lightgrey", spoken: heading.toLowerCase() });
}
