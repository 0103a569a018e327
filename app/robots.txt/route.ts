import { app } from "@/web/app";
import { robotsTxt } from "@/web/crawlers";

/** `GET /robots.txt` (docs/decisions.md#crawlers). */
export function GET() {
  return new Response(robotsTxt(app().config.publicUrl), {
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "public, max-age=86400" },
  });
}
