import { app } from "@/web/app";
import { robotsTxt } from "@/web/crawlers";

// Read at each request: the public origin is configured at run time, the index changes.
export const dynamic = "force-dynamic";

/** `GET /robots.txt` (docs/decisions.md#crawlers). */
export function GET() {
  return new Response(robotsTxt(app().config.publicUrl), {
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "public, max-age=86400" },
  });
}
