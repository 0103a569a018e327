/**
 * A check of an entity as the resolver records it, for the tests and benches of the index and its
 * notices: accepted, named after its domain, holding `credentials` (each verified or `not_listed`).
 */
import type { Claim, EntityResult } from "ident-resolver";

export type CredentialSpec = { id: string; verified: boolean };

export function credentialCheck(domain: string, credentials: readonly CredentialSpec[], fetchedAt: string): EntityResult {
  const claim = (c: CredentialSpec): Claim => ({
    id: c.id,
    verified: c.verified,
    ...(c.verified ? {} : { reason: "not_listed" as const }),
    claimed: { id: c.id },
    problems: [],
  });
  return {
    entity: {
      status: "accepted",
      domain,
      network_id: `§:entity:${domain}`,
      entity_type: "person",
      details: { name: domain },
      problems: [],
    },
    properties: [],
    credentials: credentials.map(claim),
    connections: [],
    jsonld: null,
    cache: { fetched_at: fetchedAt, stale: false },
  };
}
