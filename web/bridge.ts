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
import type { RequestContext } from "./decision";
import type { PreviewCache } from "./preview-image";

/** What the server (web/serve.js) uses of the app (web/app.ts, whose `App` is one). */
export type BridgedApp = {
  log: Logger;
  guard(server: Server): void;
  clientErrorAnswer(code: string | undefined, rawPacket?: Buffer): string;
  close(): Promise<void>;
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
