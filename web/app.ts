/**
 * The web app's one instance of everything (docs/architecture.md): reads the configuration once,
 * builds one resolver and one page cache per server process, and hands them to the pages, the API and
 * the production server (web/serve.js). The CLI builds the same resolver from the same configuration
 * (lib/setup.ts), so they never disagree.
 */
import "server-only";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { configErrorMessage, parseConfig, type Config } from "ident-resolver/setup";
import type { Crawler } from "ident-resolver/discovery";
import { createLogger, type Logger } from "ident-resolver/setup";
import { createConfiguredResolver, openConfiguredIndex, type ConfiguredResolver } from "ident-resolver/setup";
import { clientKey } from "ident-resolver/traffic";
import { LIMITS } from "ident-resolver/traffic";
import { clientErrorAnswer, connectionRoom, descriptorLimit, guardServer, quietConsole } from "./front";
import { createApi, type Api } from "./api";
import { rateLimitHeaders, rateLimitPolicy } from "./api-headers";
import { createBadges, type Badges } from "./badge";
import { bridge, type BridgedApp } from "./bridge";
import { streamsTo } from "./clients";
import { startOperations } from "./operations";
import { createPageCache, type PageCache } from "./page-cache";
import { pageVersion, versionGeneration } from "./page-version";
import type { Route } from "./routes";
import { serveRecheck } from "./recheck";
import { sendText } from "./response";
import { createShedder, type Shed } from "./shed";
import { createNotices, type Notices } from "./notices";
import { startNotices } from "./notifier";
import type { Notifier } from "ident-resolver/notify";

export type App = BridgedApp & {
  config: Config;
  resolver: ConfiguredResolver;
  /** Warm pages, kept whole, in front of Next (web/page-cache.ts). */
  pages: PageCache;
  /** Answers every `/api/` request, without Next (web/api.ts). */
  api: Api;
  /** Answers every entity's badge, from the index, without Next (web/badge.ts). */
  badges: Badges;
  /** Answers the webhooks and the WebSub hub, without Next (web/notices.ts). */
  notices: Notices;
  /** Sends what followers wait for (docs/notices.md#delivery); null without an index. */
  notifier?: Promise<Notifier | null>;
  /** Answers the "Re-check now" form, without Next (web/recheck.ts). */
  recheck(req: IncomingMessage, res: ServerResponse): void;
  /** The rate-limit policy every `/api/` answer carries (docs/api.md#limits). */
  apiPolicy: Readonly<Record<string, string>>;
  /** The refusal of a request past the limits on requests in progress (web/shed.ts), or null when it is counted in. */
  shed(req: IncomingMessage, res: ServerResponse, route: Route, client: string): Shed | null;
  /** The refusal of a request past a per-client limit its route names (web/shed.ts), or null when each is taken. */
  limited(req: IncomingMessage, res: ServerResponse, route: Route, client: string): Promise<Shed | null>;
  /** The client of a request, from its X-Forwarded-For (lib/traffic/client.ts). */
  clientOf(forwardedFor: string | null): string;
  /** A client's lookups in progress (web/shed.ts counts them), for admission's fair bound (web/admission.ts). */
  lookupsInProgress(client: string): number;
  /** A client's requests in progress, every kind together (web/shed.ts), for the search queue's fairness. */
  requestsInProgress(client: string): number;
  /** Structured logs (docs/deploying.md#logs), with the id of the request each line is written in. */
  log: Logger;
  /** Starts the operators' listener of `/metrics` (web/operations.ts); instrumentation.ts calls it once. */
  startOperations(): Promise<Server | null>;
  /** Guards the public server: timeouts, and connections per client and in all (web/front.ts); web/serve.js calls it once. */
  guard(server: Server): void;
  /** The raw answer to a request Node's parser refused (web/front.ts), for web/serve.js's `clientError`. */
  clientErrorAnswer(code: string | undefined, rawPacket?: Buffer): string;
  /** Sends what Next writes to the console through `log`, one line each (web/front.ts); instrumentation.ts calls it once. */
  quietConsole(): void;
  /** Discovery and re-verification; null when off (`IDENT_CRAWL=0`) or without an index. */
  crawler?: Promise<Crawler | null>;
  /**
   * Stops the instance's own work (docs/deploying.md#upgrading-without-losing-results): background
   * resolutions given 5 s to finish, the results waiting for the store 10 s to be written (what
   * still waits is logged, by count), then the resolver and the store closed.
   */
  close(): Promise<void>;
};

/** Validates the environment (docs/decisions.md#configuration); throws one message naming every bad variable. */
export function loadConfig(): Config {
  const parsed = parseConfig(process.env);
  if (!parsed.ok) throw new Error(configErrorMessage(parsed.errors));
  return parsed.config;
}

/**
 * How long a stopping instance waits, once its requests are answered (web/serve.js), for the lookups
 * whose clients went away: the fetch deadline's default, beside the crawler's stop.
 */
const LOOKUPS_WAIT_MS = 10_000;

type Answerers = Pick<App, "pages" | "api" | "badges" | "recheck">;

/** What answers requests besides Next: the page cache, the API, the badges and the re-check. */
function answerers(
  parts: {
    resolver: ConfiguredResolver;
    clientOf: App["clientOf"];
    log: Logger;
    apiPolicy: App["apiPolicy"];
    counts: Pick<App, "lookupsInProgress" | "requestsInProgress">;
  },
  app: () => App,
): Answerers {
  const { resolver, clientOf, log, apiPolicy, counts } = parts;
  return {
    pages: createPageCache({
      version: (route) => pageVersion(resolver, route),
      generation: (route) => versionGeneration(resolver, route),
      // Next streams metadata to browsers and blocks on it for other clients: one copy of each.
      variant: (req) => (streamsTo(req.headers["user-agent"] ?? null) ? "browser" : "agent"),
    }),
    api: createApi(Object.assign({ resolver, clientOf, log, policy: apiPolicy }, counts)),
    badges: createBadges({ store: resolver.store, log }),
    recheck: (req, res) =>
      void serveRecheck(app(), req, res).catch((err: unknown) => {
        log.error(`recheck: ${err instanceof Error ? err.message : String(err)}`);
        if (!res.headersSent) sendText(req, res, 500, "This resolver could not re-check just now; try again shortly.");
        else res.destroy();
      }),
  };
}

/** The process's own parts: the connection guard, the operators' listener, the console, the parser's refusals. */
function processParts(
  config: Config,
  resolver: ConfiguredResolver,
  log: Logger,
  apiPolicy: App["apiPolicy"],
): Pick<App, "guard" | "startOperations" | "quietConsole" | "clientErrorAnswer"> {
  return {
    clientErrorAnswer: (code, rawPacket) => clientErrorAnswer(code, rawPacket, apiPolicy),
    guard: (server) =>
      void guardServer(server, {
        maxPerClient: config.traffic.connectionsPerClient,
        maxOpen: () => connectionRoom(descriptorLimit(), config.traffic.outbound),
        trustedHops: config.trustedHops,
        refused: () => resolver.metrics.refusals.inc({ limit: LIMITS.connectionsPerClient.refused }),
      }),
    startOperations: () =>
      startOperations({
        addr: config.metricsAddr,
        log,
        metrics: async () => ({ text: await resolver.metrics.registry.metrics(), contentType: resolver.metrics.registry.contentType }),
      }),
    quietConsole: () => quietConsole(log),
  };
}

/**
 * The process's app, kept on the bridge (web/bridge.ts): Next may load this module more than once
 * (one copy per bundle), and the server (web/serve.js), outside the bundle, takes its handler from it.
 */
export function app(): App {
  const held = bridge();
  // The bridge holds it as what the server needs of it; its only writer, below, puts an App there.
  if (held.app) return held.app as App;
  const config = loadConfig();
  // Each line says the request it was written in (docs/deploying.md#logs).
  const log = createLogger(config.logLevel, undefined, () => held.requests.getStore()?.id);
  const warn = (line: string) => log.warn(line);
  const index = openConfiguredIndex(config, warn);
  // Bundled by Next (which sets NEXT_RUNTIME), the fetch thread's code is JavaScript (lib/fetch/thread.ts).
  const resolver = createConfiguredResolver(config, {
    store: index.store,
    log: warn,
    fetchThread: { bundled: Boolean(process.env.NEXT_RUNTIME) },
  });
  // Clients are keyed by the rightmost trusted hop of X-Forwarded-For.
  const clientOf = (forwardedFor: string | null) => clientKey(forwardedFor, config.trustedHops);
  const shedder = createShedder({
    settings: config.traffic,
    retryAfterS: () => resolver.traffic.outbound.retryAfterS,
    refused: (r) => resolver.metrics.refusals.inc({ limit: r.refused }),
    limitHeaders: (client) => rateLimitHeaders(resolver.traffic.windows, client),
    take: (limit, client) => resolver.traffic.windows[limit].take(client),
  });
  // The rate-limit policy, on every answer to /api/ (docs/api.md#limits), the front door's included.
  const apiPolicy = rateLimitPolicy(config.traffic);
  const counts = { lookupsInProgress: shedder.lookupsOf, requestsInProgress: shedder.requestsOf };
  // docs/notices.md: the callbacks' client, the notifier once the index is open, and the routes that subscribe.
  const following = startNotices(config, index.store, log);
  const notices = createNotices({
    resolver,
    clientOf,
    log,
    publicUrl: config.publicUrl,
    callbacks: following.callbacks,
    wake: following.wake,
  });
  const built: App = Object.assign(
    { config, resolver, clientOf, log, shed: shedder.shed, limited: shedder.limited, apiPolicy, notices, notifier: following.notifier },
    counts,
    answerers({ resolver, clientOf, log, apiPolicy, counts }, () => built),
    processParts(config, resolver, log, apiPolicy),
    {
      async close() {
        // docs/deploying.md#upgrading-without-losing-results: a lookup whose client went away ends, and is recorded.
        const [, , running] = await Promise.all([
          (await built.crawler)?.stop(5000),
          following.stop(5000),
          resolver.finishLookups(LOOKUPS_WAIT_MS),
        ]);
        if (running > 0)
          log.error(`stopping: ${running} lookups had not ended after ${LOOKUPS_WAIT_MS / 1000} s; their results are not recorded`);
        const store = await resolver.store;
        const left = store ? await store.flush(10_000) : 0;
        if (left > 0) log.error(`store: stopping with ${left} results not recorded (the database did not take them within 10 s)`);
        await resolver.close();
      },
    },
  );
  held.app = built;
  // docs/decisions.md#discovery: background resolutions start with the server.
  built.crawler = index.startCrawler(resolver);
  return built;
}
