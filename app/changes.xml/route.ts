import { app } from "@/web/app";
import { answerChangesFeed } from "@/web/feed-routes";

// Read at each request: the index changes.
export const dynamic = "force-dynamic";

/** `GET /changes.xml` (docs/api.md#changes): every change of verdict, newest first, paged, as Atom; never fetches. */
export async function GET(request: Request) {
  return answerChangesFeed(app(), request);
}
