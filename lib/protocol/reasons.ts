/** Every reason a claim can fail (docs/decisions.md#verification): a closed set. */
export const REASONS = [
  "invalid_entry",
  "duplicate",
  "limit",
  "not_found",
  "unreachable",
  "timeout",
  "too_large",
  "blocked",
  "invalid_document",
  "id_mismatch",
  "not_listed",
  "not_claimed",
  "entity_mismatch",
  "unsafe_url",
  "no_backlink",
] as const;
export type Reason = (typeof REASONS)[number];

/** The verdict of one rule: verified, or a reason with a message in plain words. */
export type Verdict = { verified: true } | { verified: false; reason: Reason; message: string; detail?: string };
