import { answerNext } from "@/web/api";
import { app } from "@/web/app";

/**
 * `GET /api/resolve?q=` (docs/api.md), as web/api.ts answers it. Under `npm start` the server answers
 * every `/api/` request before Next (web/serve.js); these routes answer them under `next dev`.
 */
const answer = (request: Request) => answerNext(app().apiAnswers, request);
export { answer as GET, answer as HEAD, answer as OPTIONS };
