import type { PropertyDocument } from "../documents/property";
import { sameId } from "../protocol/ids";
import type { Verdict } from "../protocol/reasons";

/**
 * V3 with docs/decisions.md#verification [bind]: property `propertyId` of the entity `networkId` verifies when the
 * property document's `id` equals `propertyId` and its `ownership[]` names `networkId`.
 */
export function verifyProperty(networkId: string, propertyId: string, doc: PropertyDocument, host: string): Verdict {
  const property = doc.ident_property;
  if (!sameId(property.id, propertyId)) {
    return {
      verified: false,
      reason: "id_mismatch",
      message: `${host}'s property document is about ${property.id}, not ${propertyId}; it must carry the id it is served for`,
    };
  }
  if (!property.ownership.some((owner) => sameId(owner, networkId))) {
    return {
      verified: false,
      reason: "not_listed",
      message: `${host}'s property document does not name ${networkId} among its owners; ${host} must add it to ownership[]`,
    };
  }
  return { verified: true };
}
