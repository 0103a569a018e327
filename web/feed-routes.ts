/**
 * The feeds' routes (docs/api.md#feeds), answered from the index only: the domain checked, the
 * changes read in their turn at the engine (web/index-reads.ts), the Atom written with an ETag
 * (If-None-Match answers 304). Each read counts as a search of the client's minute, as the sitemaps
 * do (docs/decisions.md#crawlers): taken by the server before the handler runs (its row, web/routes.ts).
 */
import { parseQuery } from "ident-resolver";
import { entityChanges, issuerChanges } from "ident-resolver/store";
import { cursorOf, decodeChangeCursor } from "ident-resolver/store";
import type { AdmissionDeps } from "./admission";
import { indexUnavailable, readInTurn } from "./index-reads";
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
  const store = await app.resolver.store;
  if (!store) return indexUnavailable("no index");
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
        hub: at("/hub"),
      });
    }
    const changes = await issuerChanges(store.db, domain);
    return atomFeed(changes, {
      self: at(`/issuer/${domain}/feed.xml`),
      page: at(`/issuer/${domain}`),
      title: `Credentials issued by ${domain}: changes of verdict`,
      since: "1970-01-01T00:00:00.000Z",
      entityPage,
      hub: at("/hub"),
    });
  };
  const body = await readInTurn(app, read).catch((err: unknown) => {
    app.log.warn(`store: the feed of ${domain} could not be read: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  });
  if (body instanceof Response) return body;
  if (body === undefined) return indexUnavailable("unreadable");
  if (body === null) return text(404, `The index has no record of ${domain}; look it up first.`);
  const etag = etagOf(body);
  const self = at(`/${kind}/${domain}/feed.xml`);
  const headers = Object.assign({}, CORS_HEADERS, {
    "Content-Type": ATOM_TYPE,
    "Cache-Control": FRESH,
    ETag: etag,
    Link: hubLinks(origin, self),
  });
  if (notModified(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  return new Response(body, { headers });
}

/** WebSub's discovery (§4): the hub and the topic's own URL, on every answer of a feed (docs/notices.md#websub). */
export const hubLinks = (origin: string, self: string): string => `<${new URL("/hub", origin).href}>; rel="hub", <${self}>; rel="self"`;

const NOT_HANDED_OUT = "The page link is not one this server handed out; start at /changes.xml.";

/** Entries a page of `/changes.xml` holds. */
export const CHANGES_FEED_ENTRIES = 50;

/**
 * `GET /changes.xml?before=` (docs/api.md#changes): every change of verdict the index has recorded,
 * newest first in the order recorded, paged (RFC 5005 §3): each page links the first and, while older
 * changes remain, the next, which starts just before its last entry's position. Entry ids are those
 * of the entity and issuer feeds.
 */
export async function answerChangesFeed(app: Pick<App, "resolver" | "config" | "log"> & AdmissionDeps, request: Request) {
  const asked = new URL(request.url).searchParams.get("before");
  const before = asked === null ? null : decodeChangeCursor(asked);
  if (asked !== null && before === null) return text(400, NOT_HANDED_OUT);
  const store = await app.resolver.store;
  if (!store) return indexUnavailable("no index");
  const read = async () => {
    const from = before === null ? null : await store.positionOf(before);
    return before !== null && from === null ? null : store.changes({ before: from }, CHANGES_FEED_ENTRIES);
  };
  const page = await readInTurn(app, read).catch((err: unknown) => {
    app.log.warn(`store: the changes could not be read: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  });
  if (page instanceof Response) return page;
  if (page === undefined) return indexUnavailable("unreadable");
  if (page === null) return text(400, NOT_HANDED_OUT);
  const at = (path: string) => new URL(path, app.config.publicUrl).href;
  const first = at("/changes.xml");
  const last = page.changes.at(-1);
  const body = atomFeed(page.changes, {
    self: asked === null ? first : at(`/changes.xml?before=${asked}`),
    page: at("/"),
    title: "Every change of verdict this resolver has recorded",
    since: "1970-01-01T00:00:00.000Z",
    entityPage: (d) => at(`/entity/${d}`),
    hub: at("/hub"),
    pages: [
      { rel: "first", href: first },
      ...(page.more && last ? [{ rel: "next" as const, href: at(`/changes.xml?before=${cursorOf(last)}`) }] : []),
    ],
  });
  const etag = etagOf(body);
  // A page further back never changes; the first changes with each check: kept seconds.
  const cache = asked === null ? "public, max-age=10" : FRESH;
  // The topic is the feed's first page, whichever page this is (docs/notices.md#topics).
  const headers = Object.assign({}, CORS_HEADERS, {
    "Content-Type": ATOM_TYPE,
    "Cache-Control": cache,
    ETag: etag,
    Link: hubLinks(app.config.publicUrl, first),
  });
  if (notModified(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  return new Response(body, { headers });
}
