import { extractLinks } from "../documents/embed.ts";
import { sameId } from "../protocol/ids.ts";
import type { Verdict } from "../protocol/reasons.ts";

/** Whether a connection URL may be fetched at all: only `https:` (docs/decisions.md#verification). */
export function connectionUrl(id: string): URL | null {
  try {
    const url = new URL(id);
    return url.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

/**
 * rel=me (docs/decisions.md#verification): the page at the connection URL has an `<a>` or `<link>` whose `rel` has the token
 * `me` and whose `href` is `https://{domain}` with path `/` or none.
 */
export function verifyConnection(domain: string, pageUrl: string, html: string): Verdict {
  for (const link of extractLinks(html)) {
    const tokens = link.rel.toLowerCase().split(/[\t\n\f\r ]+/);
    if (!tokens.includes("me")) continue;
    let href: URL;
    try {
      href = new URL(link.href.trim(), pageUrl);
    } catch {
      continue;
    }
    if (
      href.protocol === "https:" &&
      href.port === "" &&
      href.username === "" &&
      href.password === "" &&
      sameId(href.hostname, domain) &&
      href.pathname === "/" &&
      href.search === "" &&
      href.hash === ""
    ) {
      return { verified: true };
    }
  }
  return {
    verified: false,
    reason: "no_backlink",
    message: `The page at ${pageUrl} has no <a> or <link> with rel="me" pointing back to https://${domain}/`,
  };
}
