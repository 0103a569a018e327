import { profilePage, serializeJsonLd } from "ident-resolver";
import type { EntityResult } from "ident-resolver";
import { app } from "@/web/app";
import { FAILED, orFailure } from "@/web/settle";

/**
 * The entity's schema.org JSON-LD (docs/decisions.md#json-ld), once every claim is settled: only verified claims go in.
 * The text is escaped so nothing in it can close the element, and it parses back to the same value.
 */
export async function JsonLd({ result, profile = false }: { result: Promise<EntityResult> | EntityResult; profile?: boolean }) {
  // Nothing for crawlers to read rather than a page that fails (web/settle.ts).
  const r = await orFailure(result, "an entity's JSON-LD", app().log.error);
  if (r === FAILED || !r.jsonld) return null;
  // On the entity's own page, the page is a ProfilePage about it: a named Person or Organization
  // (what search engines read a profile page for), not a Thing.
  const named = (r.jsonld["@type"] === "Person" || r.jsonld["@type"] === "Organization") && typeof r.jsonld["name"] === "string";
  const ld =
    profile && named
      ? profilePage(r.jsonld, {
          url: new URL(`/entity/${r.entity.domain}`, app().config.publicUrl).href,
          dateModified: r.entity.last_checked_at ?? r.cache.fetched_at,
        })
      : r.jsonld;
  return <script type="application/ld+json" data-entity={r.entity.domain} dangerouslySetInnerHTML={{ __html: serializeJsonLd(ld) }} />;
}
