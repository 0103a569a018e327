import type { NextRequest } from "next/server";
import { answerResolve } from "@/web/api";
import { app } from "@/web/app";

/**
 * `GET /api/resolve?q=` (docs/decisions.md#interfaces), as web/api.ts answers it. Under `npm start` the
 * server answers it before Next (web/serve.js); this route answers it under `next dev`.
 */
export async function GET(request: NextRequest) {
  const answer = await answerResolve(app(), request.nextUrl.searchParams, request.headers.get("x-forwarded-for"));
  return Response.json(answer.body, { status: answer.status, headers: answer.headers });
}
