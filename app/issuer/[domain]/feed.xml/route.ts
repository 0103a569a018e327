import { app } from "@/web/app";
import { answerFeed } from "@/web/feed-routes";

// Read at each request: the index changes.
export const dynamic = "force-dynamic";

/** `GET /issuer/{domain}/feed.xml` (docs/api.md#feeds): changes of the credentials it issues, as Atom; never fetches. */
export async function GET(request: Request, { params }: { params: Promise<{ domain: string }> }) {
  return answerFeed(app(), request, "issuer", (await params).domain);
}
