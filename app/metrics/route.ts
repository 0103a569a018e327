import { app } from "@/web/app";

/** `GET /metrics` (docs/deploying.md#metrics): this instance's figures as Prometheus text. */
export async function GET() {
  const { registry } = app().resolver.metrics;
  return new Response(await registry.metrics(), { headers: { "Content-Type": registry.contentType, "Cache-Control": "no-store" } });
}
