import { parse } from "node-html-parser";
import { scanTags } from "./html-scan";

/** Largest page the readers look at (the fetcher caps pages at 2 MiB too, SPEC §3). */
export const MAX_PAGE_CHARS = 2 * 1024 * 1024;

const ATTR = `(type|id)=(?:"([^"]*)"|'([^']*)')`;
const START_TAG_ATTRS = new RegExp(`^\\s*${ATTR}\\s+${ATTR}\\s*$`);
const SCRIPT = new Set(["script"]);
const LINKS = new Set(["a", "link"]);

/**
 * Whether a `<script>` start tag's raw attributes are exactly `type="application/json"` and
 * `id="{elementId}"`, in either order, each in double or single quotes, names in lower case (seed §4,
 * SPEC §4). Anything else is not the fallback.
 */
export function isEmbedStartTag(rawAttrs: string, elementId: string): boolean {
  const m = START_TAG_ATTRS.exec(rawAttrs);
  if (!m) return false;
  const [, name1 = "", dq1, sq1, name2 = "", dq2, sq2] = m;
  if (name1 === name2) return false;
  const values: Record<string, string | undefined> = { [name1]: dq1 ?? sq1, [name2]: dq2 ?? sq2 };
  return values.type === "application/json" && values.id === elementId;
}

/** One start tag read by node-html-parser: small input, so its cost is bounded. */
function element(tag: string, name: string) {
  return parse(tag, { comment: false }).querySelector(name);
}

/**
 * The text of the first accepted embed of `elementId` in a page (V7, SPEC §4), or null. Only the raw
 * HTML counts: no script runs, and commented-out elements are not seen.
 */
export function extractEmbed(html: string, elementId: string): string | null {
  for (const script of scanTags(html.slice(0, MAX_PAGE_CHARS), SCRIPT)) {
    const el = element(script.tag, "script");
    if (el && isEmbedStartTag(el.rawAttrs, elementId)) return script.text;
  }
  return null;
}

/** `rel` and `href` of every `<a>` and `<link>` that has both, for rel=me checks (SPEC §6). */
export function extractLinks(html: string): { rel: string; href: string }[] {
  const links: { rel: string; href: string }[] = [];
  for (const { name, tag } of scanTags(html.slice(0, MAX_PAGE_CHARS), LINKS)) {
    if (!/\brel\s*=/i.test(tag)) continue;
    const el = element(tag, name);
    const rel = el?.getAttribute("rel");
    const href = el?.getAttribute("href");
    if (rel !== undefined && href !== undefined) links.push({ rel, href });
  }
  return links;
}
