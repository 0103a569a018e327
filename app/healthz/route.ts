/** `GET /healthz` (docs/deploying.md#health): the process answers. Nothing else is asked. */
export function GET() {
  return Response.json({ status: "ok" }, { headers: { "Cache-Control": "no-store" } });
}
