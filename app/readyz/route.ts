import { app } from "@/web/app";

/**
 * `GET /readyz` (docs/deploying.md#health): 200 when the store, and Redis when configured, answer;
 * 503 naming what does not. Lookups are answered either way (docs/deploying.md#when-a-part-fails):
 * this tells a load balancer or an operator, it does not stop the instance.
 */
export async function GET() {
  const { resolver } = app();
  const store = await resolver.store;
  const checks: Record<string, { ok: boolean; detail?: string }> = {
    store: store
      ? store.state() !== "running"
        ? { ok: false, detail: store.state() }
        : (await store.ping())
          ? { ok: true, ...(store.backlog ? { detail: `${store.backlog} results waiting to be recorded` } : {}) }
          : {
              ok: false,
              detail: `the ${store.engine === "postgres" ? "PostgreSQL server" : "embedded store"} does not answer; results wait to be recorded`,
            }
      : { ok: false, detail: "the index could not be opened; lookups are answered without it" },
  };
  if (resolver.fleet) {
    checks.redis = (await resolver.fleet.ping())
      ? { ok: true }
      : { ok: false, detail: "Redis does not answer; this instance uses its own cache and limits" };
  }
  const ready = Object.values(checks).every((c) => c.ok);
  return Response.json(
    { status: ready ? "ready" : "degraded", checks },
    { status: ready ? 200 : 503, headers: { "Cache-Control": "no-store" } },
  );
}
