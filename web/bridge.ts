/**
 * The one seam between the server (web/serve.js, outside Next's bundles) and the app inside them
 * (docs/architecture.md#the-framework-seam). Next loads the app's modules once per bundle (the
 * instrumentation hook's, each route's), so a module-level value is not one value: the app's instance
 * and the store of each request's context are kept on `globalThis` under one name, here and nowhere
 * else. web/serve.js reads `handler` from it, the pages read their request through
 * web/request-context.ts.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Logger } from "ident-resolver/setup";
import type { Probe } from "ident-resolver";
import type { IndexSearch } from "ident-resolver/store";
import type { Admission } from "./admission";
import type { Delivery } from "./delivery";
import type { PageRequest } from "./page-request";
import type { PreviewCache } from "./preview-image";
import type { Route } from "./routes";

/** What the server (web/serve.js) uses of the app (web/app.ts, whose `App` is one). */
export type BridgedApp = {
  log: Logger;
  guard(server: Server): void;
  clientErrorAnswer(code: string | undefined, rawPacket?: Buffer): string;
  close(): Promise<void>;
};

/** Each request's context (web/request-context.ts reads it): what the server decided before Next ran. */
export type RequestContext = {
  /** The request's id (X-Request-Id), written with every log line made while it runs. */
  id: string;
  route: Route;
  /** The client's key for the limits (lib/traffic/client.ts), worked out once from X-Forwarded-For. */
  client: string;
  userAgent: string | null;
  /** This response's CSP nonce (docs/decisions.md#security-headers). */
  nonce: string;
  /** What admission decided for a page that needed it (a lookup, the check, a search of the index); null otherwise. */
  admission: Admission | null;
  /** An answer page's results, started as soon as the request was admitted; null for any other page. */
  delivery: Promise<Delivery> | null;
  /** The status and headers the page goes with (a refusal's, a bad query's), decided before its first byte. */
  head: { status: number; headers: Record<string, string> };
  /**
   * The resolver's cache-only answer to this request's query, asked once (web/probe.ts): the page
   * cache's version asks it, admission takes it; null until asked, and again once admission took it.
   */
  probe: { key: string; answer: Promise<Probe> } | null;
  /**
   * A search of the index, run by the server in its turn before Next renders the page (web/server.ts):
   * the page of results; null for a cursor the index did not hand out; undefined when the index could
   * not be read (or the search was refused: see `admission`), or for any other page.
   */
  searched?: IndexSearch | null;
  /** What the page reads of its request (web/page-request.ts), worked out the first time the layout, metadata or page asks. */
  read: Promise<PageRequest> | null;
};

/** Next's handler of one request, as its custom server API gives it (`app.getRequestHandler()`). */
export type NextHandle = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export type Bridge = {
  /** The app, once instrumentation.ts has built it (web/app.ts). */
  app?: BridgedApp;
  /** Each request's context, from the moment the server has classified it. */
  requests: AsyncLocalStorage<RequestContext>;
  /** Drawn preview images (web/preview-image-render.tsx), made on first use. */
  previews?: PreviewCache;
  /** What web/serve.js hands every request to, with Next's handler (web/server.ts). */
  handler?: (next: NextHandle, options: { dev: boolean }) => (req: IncomingMessage, res: ServerResponse) => void;
};

const holder = globalThis as typeof globalThis & { __ident?: Bridge };

/** The process's bridge, made on first use. */
export function bridge(): Bridge {
  return (holder.__ident ??= { requests: new AsyncLocalStorage<RequestContext>() });
}
