import type { PropertyDocument } from "../documents/property.ts";
import { sameId } from "../protocol/ids.ts";
import type { Verdict } from "../protocol/reasons.ts";

/** V3 [bind]: a property document whose `id` is `publishedId` is about `propertyId` (V6: case-insensitively). */
export const isAbout = (publishedId: string, propertyId: string): boolean => sameId(publishedId, propertyId);

/** V3: an `ownership[]` of these network_ids names `networkId` (V6: case-insensitively). */
export const namesOwner = (ownerIds: readonly string[], networkId: string): boolean => ownerIds.some((owner) => sameId(owner, networkId));

/**
 * V3 with docs/decisions.md#verification [bind]: property `propertyId` of the entity `networkId` verifies when the
 * property document's `id` equals `propertyId` and its `ownership[]` names `networkId`.
 */
export function verifyProperty(networkId: string, propertyId: string, doc: PropertyDocument, host: string): Verdict {
  const property = doc.ident_property;
  if (!isAbout(property.id, propertyId)) {
    return {
      verified: false,
      reason: "id_mismatch",
      message: `${host}'s property document is about ${property.id}, not ${propertyId}; it must carry the id it is served for`,
    };
  }
  if (!namesOwner(property.ownership, networkId)) {
    return {
      verified: false,
      reason: "not_listed",
      message: `${host}'s property document does not name ${networkId} among its owners; ${host} must add it to ownership[]`,
    };
  }
  return { verified: true };
}
