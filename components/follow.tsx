/**
 * "Follow" (docs/notices.md#on-the-pages): how to learn of a change of verdict without coming back, for
 * one feed: the Atom feed itself, its WebSub hub, and a webhook made with one request. A read page
 * ships no script (web/script-free.ts): each snippet is a read-only field, reached with Tab, selected
 * whole with Ctrl+A (⌘A) and copied, as the badge's snippets are (components/share.tsx).
 */
import { app } from "@/web/app";

/** The feed's absolute URL, and the two requests that follow it, under the public origin. */
export function followSnippets(topicPath: string, origin: URL | string): { feed: string; hub: string; webhook: string; websub: string } {
  const feed = new URL(topicPath, origin).href;
  const hub = new URL("/hub", origin).href;
  const api = new URL("/api/webhooks", origin).href;
  return {
    feed,
    hub,
    webhook: `curl -X POST ${api} -H 'Content-Type: application/json' -d '{"url": "https://your-site.example/hook", "topic": "${feed}"}'`,
    websub: `curl ${hub} -d hub.mode=subscribe -d hub.topic=${feed} -d hub.callback=https://your-site.example/websub`,
  };
}

/** The section for the feed at `topicPath` (`/changes.xml`, `/entity/{domain}/feed.xml`, `/issuer/{domain}/feed.xml`), of `what`. */
export function Follow({ topicPath, what }: { topicPath: string; what: string }) {
  const { config } = app();
  const { feed, hub, webhook, websub } = followSnippets(topicPath, config.publicUrl);
  // docs/notices.md#looking-by-itself: said only where this resolver re-checks in the background.
  const every =
    config.followS % 3600 === 0
      ? `${config.followS / 3600 === 1 ? "" : `${config.followS / 3600} `}hour${config.followS === 3600 ? "" : "s"}`
      : `${Math.round(config.followS / 60)} minutes`;
  return (
    <section className="share follow" aria-labelledby="follow-title" data-testid="follow">
      <h2 id="follow-title">Follow</h2>
      <p>
        Learn when {what} changes without coming back: read the <a href={topicPath}>Atom feed</a> in a feed reader, or have each change
        pushed to your own address.
        {config.crawl ? ` This resolver checks a followed entity again by itself at least every ${every}.` : null}
      </p>
      <p className="muted" id="follow-how">
        A webhook is answered with its secret, which signs each delivery (Standard Webhooks) and reads, tests or deletes it; WebSub&apos;s
        hub at <code>{hub}</code> asks your callback to confirm first. Guide: docs/api.md#webhooks. To copy a snippet, move to it with Tab,
        select it with Ctrl+A (⌘A on a Mac) and copy it.
      </p>
      <label htmlFor="follow-feed">Feed</label>
      <textarea id="follow-feed" readOnly rows={1} value={feed} aria-describedby="follow-how" spellCheck={false} />
      <label htmlFor="follow-webhook">Webhook</label>
      <textarea id="follow-webhook" readOnly rows={3} value={webhook} aria-describedby="follow-how" spellCheck={false} />
      <label htmlFor="follow-websub">WebSub</label>
      <textarea id="follow-websub" readOnly rows={3} value={websub} aria-describedby="follow-how" spellCheck={false} />
    </section>
  );
}
