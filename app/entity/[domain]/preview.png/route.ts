import { isDomain } from "ident-resolver";
import { app } from "@/web/app";
import { cachedFacts, pngResponse } from "@/web/preview-image";
import { entityPreview } from "@/web/preview-image-render";

// Read at each request: it shows what the resolver has cached now.
export const dynamic = "force-dynamic";

/**
 * `GET /entity/{domain}/preview.png`: the entity's image for shared links, 1200×630
 * (docs/decisions.md#crawlers). Drawn from what the resolver already has cached, never fetching
 * anything; the site's image, briefly cacheable, while nothing is cached. Not a domain: 404.
 */
export async function GET(_request: Request, ctx: { params: Promise<{ domain: string }> }) {
  const { domain } = await ctx.params;
  if (!isDomain(domain)) {
    return new Response("Not found\n", {
      status: 404,
      headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
    });
  }
  const { resolver, config, log } = app();
  const warn = (line: string) => log.warn(line);
  const { png, maxAgeS } = await entityPreview(await cachedFacts(resolver, domain.toLowerCase(), config, warn), warn);
  return pngResponse(png, maxAgeS);
}
