import { app } from "@/web/app";
import { entityBadgePath } from "@/web/badge";
import { badgeName } from "@/web/badge-drawing";

/** What an embedded badge's image is called where it is shown (its counts change; its subject does not). */
const altOf = (domain: string) => `ident status of ${domain}`;

/** The Markdown and the HTML that show `domain`'s badge, linked to its page, under the public origin. */
export function badgeSnippets(domain: string, origin: URL | string): { markdown: string; html: string } {
  const page = new URL(`/entity/${domain}`, origin).href;
  const image = new URL(entityBadgePath(domain), origin).href;
  const alt = altOf(domain);
  return { markdown: `[![${alt}](${image})](${page})`, html: `<a href="${page}"><img src="${image}" alt="${alt}"></a>` };
}

/**
 * "Share": the entity's badge (docs/api.md#badges) and the snippets that embed it, read once the page's
 * own check is recorded (`settled`). A read page ships no script (web/script-free.ts), so each snippet
 * is a read-only field: reached with Tab, selected whole with Ctrl+A (⌘A), copied. Nothing when the
 * index cannot be read.
 */
export async function Share({ domain, settled }: { domain: string; settled: Promise<unknown> }) {
  await settled.catch(() => undefined);
  const badge = await app().badges.current(domain);
  if (!badge) return null;
  const { markdown, html } = badgeSnippets(domain, app().config.publicUrl);
  // The badge's own tag in its address: a browser shows the badge of this check, not one it kept.
  const src = `${entityBadgePath(domain)}?v=${badge.etag.slice(1, -1)}`;
  return (
    <section className="share" aria-labelledby="share-title" data-testid="share">
      <h2 id="share-title">Share</h2>
      <p>
        {/* Lazy: the section is at the page's foot, and drawing an SVG's text holds the browser's main
            thread while claims still stream in above it (docs/decisions.md#cold-pages). */}
        <img
          src={src}
          alt={badgeName(badge.facts)}
          width={badge.width}
          height={badge.height}
          loading="lazy"
          decoding="async"
          data-testid="share-badge"
        />
      </p>
      <p className="muted" id="share-how">
        A badge drawn from this resolver&apos;s index: it follows each new check. To copy a snippet, move to it with Tab, select it with
        Ctrl+A (⌘A on a Mac) and copy it.
      </p>
      <label htmlFor="share-markdown">Markdown</label>
      <textarea id="share-markdown" readOnly rows={3} value={markdown} aria-describedby="share-how" spellCheck={false} />
      <label htmlFor="share-html">HTML</label>
      <textarea id="share-html" readOnly rows={3} value={html} aria-describedby="share-how" spellCheck={false} />
    </section>
  );
}
