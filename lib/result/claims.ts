/**
 * The claims of an entity as every count of them sees them (docs/decisions.md#counting-claims): the
 * three kinds, each claim's key, each claim once. The index records claims by these keys, and the
 * badge, search, the preview image, the entity page and `ident check` count claims through
 * {@link claimCounts}, so that no two of them count differently.
 */
import { sha256Hex } from "../hash.ts";
import { MAX_ID_BYTES, utf8Bytes, wellFormed } from "../documents/display-limits.ts";
import type { Claim } from "./record.ts";

export const CLAIM_KINDS = ["properties", "credentials", "connections"] as const;
export type ClaimKind = (typeof CLAIM_KINDS)[number];

/**
 * A claim's key: its id in lower case, or its place in the list when it has none. It is part of the
 * claims' and the changes' btree indexes, whose rows are at most 2,704 bytes, and of an export's lines:
 * one longer than {@link MAX_ID_BYTES} written as JSON is its digest instead (docs/decisions.md#the-index),
 * so the record never fails on it.
 */
export function claimKey(claim: Pick<Claim, "id">, index: number): string {
  return claim.id === null ? `#${index}` : boundedKey(wellFormed(claim.id.toLowerCase()));
}

/** One claim of an entity's lists, where it is listed and its key. */
export type ListedClaim<T> = { kind: ClaimKind; claim: T; index: number; key: string };

/**
 * The claims an entity lists, each once (docs/decisions.md#counting-claims): an entry whose key repeats
 * an earlier one of its kind (a `duplicate`, V2, compared case-insensitively, V6) is the same claim
 * listed again, and only its first listing counts. The index's record, the badge, search and the
 * preview image all count claims through this.
 */
export function listedOnce<T extends Pick<Claim, "id">>(lists: Readonly<Record<ClaimKind, readonly T[]>>): ListedClaim<T>[] {
  const seen = new Set<string>();
  return CLAIM_KINDS.flatMap((kind) =>
    lists[kind].flatMap((claim, index): ListedClaim<T>[] => {
      const key = claimKey(claim, index);
      if (seen.has(`${kind} ${key}`)) return [];
      seen.add(`${kind} ${key}`);
      return [{ kind, claim, index, key }];
    }),
  );
}

/** Claims that verify, of all listed, each counted once ({@link listedOnce}). */
export function claimCounts(result: Readonly<Record<ClaimKind, readonly Pick<Claim, "id" | "verified">[]>>): {
  verified: number;
  total: number;
} {
  const listed = listedOnce(result);
  return { verified: listed.filter((c) => c.claim.verified).length, total: listed.length };
}

/** ASCII a key holds as it is: printable, and nothing JSON escapes. */
const PLAIN_KEY = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/** `key` when it fits, written as JSON, in {@link MAX_ID_BYTES}; else `#sha256:` and its digest. */
export function boundedKey(key: string): string {
  if (key.length <= MAX_ID_BYTES && PLAIN_KEY.test(key)) return key;
  if (utf8Bytes(JSON.stringify(key)) - 2 <= MAX_ID_BYTES) return key;
  return `#sha256:${sha256Hex(key)}`;
}
