/**
 * The app's notifier (docs/notices.md#delivery): the guarded callbacks' client from the fetcher's own
 * settings (`IDENT_FETCH_TIMEOUT_MS`, `IDENT_CONNECT_TO`), and the notifier started once the index
 * is open, writing WebSub's bodies as the feeds are written (web/feeds.ts).
 */
import type { Config } from "ident-resolver/setup";
import type { Logger } from "ident-resolver/setup";
import type { Store } from "ident-resolver/store";
import { createCallbackClient, startNotifier, type CallbackClient, type Notifier } from "ident-resolver/notify";
import { atomFeed } from "./feeds";

export type Following = {
  callbacks: CallbackClient;
  /** The notifier; null without an index. */
  notifier: Promise<Notifier | null>;
  /** Looks at the outbox now. */
  wake(): void;
  /** Stops sending, giving what is being sent `graceMs`; what is not sent stays in the outbox. */
  stop(graceMs: number): Promise<void>;
};

/** The title of a topic's feed, as its route writes it (web/feed-routes.ts), from its URL. */
function feedTitle(topic: string): string {
  const m = /\/(entity|issuer)\/([^/]+)\/feed\.xml$/.exec(topic);
  if (!m) return "Every change of verdict this resolver has recorded";
  return m[1] === "entity" ? `${m[2]}: changes of verdict` : `Credentials issued by ${m[2]}: changes of verdict`;
}

export function startNotices(config: Config, store: Promise<Store | null>, log: Logger): Following {
  const callbacks = createCallbackClient({
    timeoutMs: config.fetchTimeoutMs,
    connectTo: config.connectTo,
    userAgent: `ident-resolver (notices; ${config.publicUrl})`,
  });
  const at = (path: string) => new URL(path, config.publicUrl).href;
  const hubUrl = at("/hub");
  const notifier = store.then((index) =>
    index
      ? startNotifier({
          store: index,
          client: callbacks,
          hubUrl,
          log: (line) => log.warn(line),
          websubBody: (sub, change) =>
            atomFeed([change], {
              self: sub.topic,
              page: sub.topic.replace(/\/feed\.xml$/, "").replace(/\/changes\.xml$/, "/"),
              title: feedTitle(sub.topic),
              since: change.at,
              entityPage: (d) => at(`/entity/${d}`),
              hub: hubUrl,
            }),
        })
      : null,
  );
  return {
    callbacks,
    notifier,
    wake: () => void notifier.then((n) => n?.wake()),
    async stop(graceMs) {
      await (await notifier)?.stop(graceMs);
      await callbacks.close();
    },
  };
}
