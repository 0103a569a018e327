import { answerNext } from "@/web/api";
import { app } from "@/web/app";

/** `/api/entity/[domain]/history` (docs/api.md), as web/api.ts answers it: see app/api/resolve/route.ts. */
const answer = (request: Request) => answerNext(app().apiAnswers, request);
export { answer as GET, answer as HEAD, answer as OPTIONS };
