import { pngResponse } from "@/web/preview-image";
import { sitePreview } from "@/web/preview-image-render";

// Drawn at the first request, not at build: the font is read from disk at run time.
export const dynamic = "force-dynamic";

/** `GET /preview.png`: the site's image for shared links to every page but an entity's (docs/decisions.md#crawlers). */
export async function GET() {
  const { png, maxAgeS } = await sitePreview();
  return pngResponse(png, maxAgeS);
}
