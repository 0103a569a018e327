/**
 * The feeds' routes (docs/api.md#feeds), answered from the index only: the domain checked, the
 * changes read, the Atom written with an ETag (If-None-Match answers 304). Each read counts as a
 * search of the client's minute, as the sitemaps do (docs/decisions.md#crawlers).
 */
import { parseQuery } from "../lib/protocol/ids";
import { isRefusal } from "../lib/traffic";
import { entityChanges, issuerChanges } from "../lib/store/feeds";
import type { AdmissionDeps } from "./admission";
import { inSearchTurn, refusalResponse, searchRefused } from "./admission";
import { CORS_HEADERS, etagOf, notModified } from "./api-headers";
import { atomFeed, ATOM_TYPE } from "./feeds";
import type { App } from "./app";

const text = (status: number, message: string, extra: Record<string, string> = {}) =>
  new Response(`${message}\n`, {
    status,
    headers: Object.assign({ "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" }, extra),
  });

/** Feeds change when a check records a change: a reader may keep one five minutes. */
const FRESH = "public, max-age=300";

export async function answerFeed(
  app: Pick<App, "resolver" | "config" | "log"> & AdmissionDeps,
  request: Request,
  kind: "entity" | "issuer",
  raw: string,
) {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return text(400, "The path is not valid percent-encoded UTF-8.");
  }
  const parsed = parseQuery(decoded);
  if (!parsed.ok || parsed.query.kind !== "domain") return text(400, `${JSON.stringify(decoded)} is not a domain.`);
  const domain = parsed.query.domain;
  const refused = await searchRefused(app, request);
  if (refused) return refused;
  const store = await app.resolver.store;
  if (!store) return text(503, "The index is not available on this server.", { "Retry-After": "60" });
  const origin = app.config.publicUrl;
  const at = (path: string) => new URL(path, origin).href;
  const entityPage = (d: string) => at(`/entity/${d}`);
  const read = async () => {
    if (kind === "entity") {
      const found = await entityChanges(store.db, domain);
      if (found === null) return null;
      const name = found.name ?? domain;
      return atomFeed(found.changes, {
        self: at(`/entity/${domain}/feed.xml`),
        page: entityPage(domain),
        title: `${name === domain ? domain : `${name} (${domain})`}: changes of verdict`,
        since: found.last_checked_at,
        entityPage,
      });
    }
    const changes = await issuerChanges(store.db, domain);
    return atomFeed(changes, {
      self: at(`/issuer/${domain}/feed.xml`),
      page: at(`/issuer/${domain}`),
      title: `Credentials issued by ${domain}: changes of verdict`,
      since: "1970-01-01T00:00:00.000Z",
      entityPage,
    });
  };
  const body = await inSearchTurn(app, request.headers.get("x-forwarded-for"), read).catch((err: unknown) => {
    app.log.warn(`store: the feed of ${domain} could not be read: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  });
  if (isRefusal(body)) return refusalResponse(body);
  if (body === undefined) return text(503, "The index could not be read just now; try again shortly.", { "Retry-After": "5" });
  if (body === null) return text(404, `The index has no record of ${domain}; look it up first.`);
  const etag = etagOf(body);
  const headers = Object.assign({}, CORS_HEADERS, { "Content-Type": ATOM_TYPE, "Cache-Control": FRESH, ETag: etag });
  if (notModified(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  return new Response(body, { headers });
}
