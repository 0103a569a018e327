import type { CredentialDocument } from "../documents/credential.ts";
import { keptId } from "../documents/display-limits.ts";
import { sameId } from "../protocol/ids.ts";
import type { Verdict } from "../protocol/reasons.ts";

/**
 * V4, V5: a credential verifies when its document's `ident_entity_id` equals the entity's
 * `network_id`. The document has already passed V5's minimum (ident_entity_id and a title).
 */
export function verifyCredential(networkId: string, doc: CredentialDocument, issuer: string): Verdict {
  if (!sameId(doc.ident_entity_id, networkId)) {
    return {
      verified: false,
      reason: "entity_mismatch",
      message: `${issuer}'s credential document names ${keptId(doc.ident_entity_id)}, not this entity (${networkId})`,
    };
  }
  return { verified: true };
}
