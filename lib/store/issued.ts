/**
 * The credentials the index knows a domain issues (docs/decisions.md#search), for `/issuer/{domain}`:
 * verified first, then by holder, a page at a time. Each page begins after the last credential of the
 * one before (its cursor), so a page deep in a large issuer's list costs what the first does.
 */
import { isDomain } from "../protocol/ids.ts";
import type { Queryable } from "./db.ts";

/** Credentials on one page of an issuer's list. */
const ISSUED_PAGE_SIZE = 100;

/** A credential the index knows a domain issues, with its holder. */
export type IssuedCredential = {
  id: string | null;
  title: string | null;
  holder: { domain: string; name: string | null; status: string };
  verified: boolean;
  reason: string | null;
  last_checked_at: string;
};

/** One page of an issuer's credentials, and the cursor of the next (null on the last). */
export type IssuedPage = { credentials: IssuedCredential[]; next: string | null };

/** Where a page begins: after this credential, the claim of `domain` keyed `key` (its verdict, then its place). */
type After = { verified: boolean; domain: string; key: string };

/** Longest cursor read: a claim's key is at most 1,024 bytes (docs/decisions.md#the-index), a cursor about 1.7 KB. */
const MAX_CURSOR_LENGTH = 4096;

/** Text the index could hold as a domain or a claim's key: lower case, and no NUL (which the engine refuses in any text). */
const indexText = (text: string) => text !== "" && !text.includes("\u0000") && text === text.toLowerCase();

/** The cursor of the page after `after`, opaque to clients. */
function encodeIssuedCursor(after: After): string {
  return Buffer.from(JSON.stringify([after.verified ? 1 : 0, after.domain, after.key])).toString("base64url");
}

/** The place a cursor names, or null for one this index could not have handed out. */
export function decodeIssuedCursor(cursor: string): After | null {
  if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 3) return null;
  const [verified, domain, key] = value as unknown[];
  if (verified !== 0 && verified !== 1) return null;
  if (typeof domain !== "string" || !isDomain(domain) || !indexText(domain) || typeof key !== "string" || !indexText(key)) return null;
  return { verified: verified === 1, domain, key };
}

type IssuedRow = {
  id: string | null;
  claim_key: string;
  label: string | null;
  domain: string;
  name: string | null;
  status: string;
  verified: boolean;
  reason: string | null;
  last_checked_at: Date;
};

/**
 * Up to `limit` credentials of `issuer` in the list's order (verified first, then holder and key),
 * from the start or after `after` within its verdict; `verdict` null reads both verdicts.
 * The credentials are read first, in order, through claims_by_issuer (migration 12), then their
 * holders: joined first, at ten million entities the planner chose workers in parallel for millions
 * of estimated rows, and their start alone took 144 ms of the 181 (docs/decisions.md#search-at-size).
 */
async function readIssued(
  db: Queryable,
  issuer: string,
  verdict: boolean | null,
  after: After | null,
  limit: number,
): Promise<IssuedRow[]> {
  const where = [`issuer = $1 AND kind = 'credentials' AND present`];
  const params: unknown[] = [issuer, limit];
  if (verdict !== null) where.push(`verified = $${params.push(verdict)}`);
  if (after) where.push(`(domain, claim_key) > ($${params.push(after.domain)}, $${params.push(after.key)})`);
  return db.query<IssuedRow>(
    `SELECT c.id, c.claim_key, c.label, c.domain, e.name, e.status, c.verified, c.reason, c.last_checked_at
     FROM (SELECT id, claim_key, label, domain, verified, reason, last_checked_at FROM claims
           WHERE ${where.join(" AND ")}
           ORDER BY verified DESC, domain, claim_key LIMIT $2) c
     JOIN entities e ON e.domain = c.domain
     ORDER BY c.verified DESC, c.domain, c.claim_key`,
    params,
  );
}

/**
 * One page of the credentials the index knows `issuer` issues (docs/decisions.md#search), after
 * `cursor` (a page's `next`); null for a cursor that is not one.
 */
export async function issuedBy(db: Queryable, issuer: string, cursor: string | null = null): Promise<IssuedPage | null> {
  const after = cursor === null || cursor === "" ? null : decodeIssuedCursor(cursor);
  if (after === null && cursor !== null && cursor !== "") return null;
  const want = ISSUED_PAGE_SIZE + 1;
  const domain = issuer.toLowerCase();
  // From a cursor, within its verdict first, each statement a range of the index; past the verified,
  // the unverified from their start.
  const rows = await readIssued(db, domain, after ? after.verified : null, after, want);
  if (after?.verified && rows.length < want) rows.push(...(await readIssued(db, domain, false, null, want - rows.length)));
  const page = rows.slice(0, ISSUED_PAGE_SIZE);
  const last = page.at(-1);
  return {
    credentials: page.map((r) => ({
      id: r.id,
      title: r.label,
      holder: { domain: r.domain, name: r.name, status: r.status },
      verified: r.verified,
      reason: r.reason,
      last_checked_at: r.last_checked_at.toISOString(),
    })),
    next:
      rows.length > ISSUED_PAGE_SIZE && last
        ? encodeIssuedCursor({ verified: last.verified, domain: last.domain, key: last.claim_key })
        : null,
  };
}
