import { serializeJsonLd } from "@/lib/result/jsonld";
import type { EntityResult } from "@/lib/result/record";

/**
 * The entity's schema.org JSON-LD (docs/decisions.md#json-ld), once every claim is settled: only verified claims go in.
 * The text is escaped so nothing in it can close the element, and it parses back to the same value.
 */
export async function JsonLd({ result }: { result: Promise<EntityResult> | EntityResult }) {
  const r = await result;
  if (!r.jsonld) return null;
  return (
    <script type="application/ld+json" data-entity={r.entity.domain} dangerouslySetInnerHTML={{ __html: serializeJsonLd(r.jsonld) }} />
  );
}
