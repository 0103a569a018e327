import { parseQuery } from "@/lib/protocol/ids";
import type { ErrorBody } from "@/lib/result/record";
import { app } from "@/web/app";

const NO_STORE = { "Cache-Control": "no-store" };

const error = (status: number, code: ErrorBody["error"]["code"], message: string) =>
  Response.json({ error: { code, message } } satisfies ErrorBody, { status, headers: NO_STORE });

/**
 * `GET /api/entity/{domain}/history` (docs/decisions.md#the-index): the changes of verdict the index
 * recorded for one entity, newest first. Never fetches anything.
 */
export async function GET(_request: Request, ctx: { params: Promise<{ domain: string }> }) {
  const { domain: raw } = await ctx.params;
  const parsed = parseQuery(raw);
  if (!parsed.ok || parsed.query.kind !== "domain") return error(400, "invalid_query", `${JSON.stringify(raw)} is not a domain`);
  const store = await app().resolver.store;
  if (!store) return error(503, "unavailable", "The index is not available on this server; lookups are answered without it.");
  const found = await store.history(parsed.query.domain).catch(() => undefined);
  if (found === undefined) return error(503, "unavailable", "The index could not be read just now; try again shortly.");
  if (found === null) return error(404, "not_found", `The index has no record of ${parsed.query.domain}; look it up first.`);
  return Response.json({ schema: "ident-resolver/history@1", ...found }, { headers: NO_STORE });
}
