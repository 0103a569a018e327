/**
 * Times from the index in words (docs/decisions.md#the-index): "verified since 3 March 2026",
 * "failing since 09:12 UTC, last verified yesterday". Always UTC, so a page reads the same wherever
 * it is rendered.
 */
import { ownValue } from "../objects.ts";
import type { Claim } from "../result/record.ts";
import type { Change } from "../store/verdicts.ts";
import { clipName } from "./display.ts";
import { reasonText, statusText } from "./explain.ts";

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAY_MS = 86_400_000;

const dayOf = (d: Date) => Math.floor(d.getTime() / DAY_MS);
const hhmm = (d: Date) => `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")} UTC`;

/** A date: its time today, "yesterday", or the day with its year ("3 March 2026"). */
export function when(iso: string, now: Date): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "at an unknown time";
  const days = dayOf(now) - dayOf(d);
  if (days === 0) return hhmm(d);
  if (days === 1) return "yesterday";
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** The day and time exactly, for a `title` or a timeline. */
export function exactly(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${hhmm(d)}`;
}

export type ClaimHistoryWords = {
  /** "Verified since …", "Failing since …, last verified …". */
  text: string;
  /** Stale on error: why the verdict is an old one, and until when it is kept. */
  stale: string | null;
};

/** What the index says of a claim's verdict over time; null when no store recorded it. */
export function claimHistoryWords(claim: Claim, now: Date): ClaimHistoryWords | null {
  const since = claim.since;
  if (!since) return null;
  if (claim.stale) {
    const last = since.last_verified_at ?? since.last_checked_at;
    return {
      text: `Last verified ${when(last, now)}`,
      stale: `Could not be re-checked since then (${reasonText(claim.stale.reason)}); kept as verified until ${exactly(claim.stale.until)}.`,
    };
  }
  // docs/decisions.md#the-index: a claim not checked this time keeps what the index knew.
  if (claim.not_checked !== undefined) {
    const run = since.verified_since
      ? `verified since ${when(since.verified_since, now)}`
      : `failing since ${when(since.failing_since ?? since.first_seen_at, now)}`;
    return { text: `Not checked this time; ${run}, last checked ${when(since.last_checked_at, now)}`, stale: null };
  }
  if (claim.verified) return { text: `Verified since ${when(since.verified_since ?? since.first_seen_at, now)}`, stale: null };
  const failing = `Failing since ${when(since.failing_since ?? since.first_seen_at, now)}`;
  return {
    text: since.last_verified_at ? `${failing}, last verified ${when(since.last_verified_at, now)}` : `${failing}, never verified`,
    stale: null,
  };
}

const KIND: Record<Exclude<Change["kind"], "entity">, string> = {
  properties: "Property",
  credentials: "Credential",
  connections: "Connection",
};

/**
 * One recorded change in words, for the timeline. Its status, reason and kind are read from the index,
 * which an import fills with any text: one outside its closed set is said in neutral words
 * (docs/decisions.md#rendering).
 */
export function changeText(
  c: Pick<Change, "kind" | "id"> & { status?: string | null; verified?: boolean | null; reason?: string | null },
): string {
  if (c.kind === "entity") {
    if (c.status === "accepted") return "Entity document accepted";
    return `Entity document not accepted: ${statusText(c.status ?? "") ?? "unknown status"}`;
  }
  const what = `${ownValue(KIND, c.kind) ?? "Claim"} ${clipName(c.id ?? "(no id)")}`;
  if (c.verified) return `${what} verified`;
  return `${what} not verified: ${reasonText(c.reason ?? "") ?? "not verified"}`;
}
