import { app } from "@/web/app";
import { answerFeed } from "@/web/feed-routes";

// Read at each request: the index changes.
export const dynamic = "force-dynamic";

/** `GET /entity/{domain}/feed.xml` (docs/api.md#feeds): the entity's changes of verdict, as Atom; never fetches. */
export async function GET(request: Request, { params }: { params: Promise<{ domain: string }> }) {
  return answerFeed(app(), request, "entity", (await params).domain);
}
