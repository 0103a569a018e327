/**
 * Reading the few things the resolver needs from raw HTML: the `<script>` embed that stands in for a
 * document (docs/protocol.md#v7-the-html-fallback, docs/decisions.md#the-html-fallback) and the
 * `<a>`/`<link>` elements of a rel=me check (docs/decisions.md#verification). Only the raw HTML
 * counts: no script runs, and commented-out elements are not seen.
 *
 * One pass of htmlparser2's tokenizer, with no tree and no stack of open elements: its cost is linear
 * in the page whatever the nesting (a tree builder's is not, on hostile pages).
 */
import type { Tokenizer as TokenizerClass, TokenizerCallbacks } from "htmlparser2";

/**
 * htmlparser2, loaded the first time a page is to be read rather than when the package is imported
 * (docs/library.md#figures): most lookups read JSON alone. The readers below need it loaded.
 */
let Tokenizer: typeof TokenizerClass | undefined;
let loading: Promise<void> | undefined;
export const htmlReady = (): Promise<void> =>
  (loading ??= import("htmlparser2").then((module) => {
    Tokenizer = module.Tokenizer;
  }));

/** Largest page the readers look at (the fetcher caps pages at 2 MiB too). */
const MAX_PAGE_CHARS = 2 * 1024 * 1024;

/** Most links read from one page. */
const MAX_LINKS = 10_000;

const ATTR = `(type|id)=(?:"([^"]*)"|'([^']*)')`;
const START_TAG_ATTRS = new RegExp(`^\\s*${ATTR}\\s+${ATTR}\\s*$`);

/**
 * Whether a `<script>` start tag's raw attributes are exactly `type="application/json"` and
 * `id="{elementId}"`, in either order, each in double or single quotes, names in lower case. Anything
 * else is not the fallback (docs/decisions.md#the-html-fallback).
 */
export function isEmbedStartTag(rawAttrs: string, elementId: string): boolean {
  const m = START_TAG_ATTRS.exec(rawAttrs);
  if (!m) return false;
  const [, name1 = "", dq1, sq1, name2 = "", dq2, sq2] = m;
  if (name1 === name2) return false;
  const values: Record<string, string | undefined> = { [name1]: dq1 ?? sq1, [name2]: dq2 ?? sq2 };
  return values.type === "application/json" && values.id === elementId;
}

/** A start tag the tokenizer met: its lower-cased name, its raw attribute text, and its decoded attributes (first of each name). */
type StartTag = { name: string; rawAttrs: string; attrs: Map<string, string> };

/**
 * Calls `onTag` for every start tag named in `wanted`, in document order, with the raw text up to its
 * end tag for a `<script>`. `onTag` returns true to stop.
 */
function readTags(html: string, wanted: ReadonlySet<string>, onTag: (tag: StartTag, text: string) => boolean): void {
  const input = html.slice(0, MAX_PAGE_CHARS);
  let tag: (StartTag & { start: number; nameEnd: number }) | null = null;
  let attrName = "";
  let attrValue = "";
  let script: StartTag | null = null;
  let scriptText = "";
  const emit = (t: StartTag, text: string) => {
    if (onTag(t, text)) tokenizer.pause();
  };
  const callbacks: TokenizerCallbacks = {
    onopentagname(start, end) {
      const name = input.slice(start, end).toLowerCase();
      tag = wanted.has(name) ? { name, rawAttrs: "", attrs: new Map(), start: start - 1, nameEnd: end } : null;
    },
    onattribname(start, end) {
      attrName = input.slice(start, end).toLowerCase();
      attrValue = "";
    },
    onattribdata(start, end) {
      if (tag) attrValue += input.slice(start, end);
    },
    onattribentity(codepoint) {
      if (tag) attrValue += String.fromCodePoint(codepoint);
    },
    onattribend() {
      if (tag && !tag.attrs.has(attrName)) tag.attrs.set(attrName, attrValue);
    },
    onopentagend(endIndex) {
      if (!tag) return;
      const done: StartTag = { name: tag.name, rawAttrs: input.slice(tag.nameEnd, endIndex), attrs: tag.attrs };
      tag = null;
      if (done.name === "script") {
        script = done;
        scriptText = "";
      } else emit(done, "");
    },
    onselfclosingtag(endIndex) {
      callbacks.onopentagend(endIndex);
    },
    ontext(start, end) {
      if (script) scriptText += input.slice(start, end);
    },
    onclosetag() {
      if (!script) return;
      const done = script;
      script = null;
      emit(done, scriptText);
    },
    onend() {
      // A <script> left open runs to the end of the page, as a browser reads it.
      if (script) emit(script, scriptText);
    },
    ontextentity() {},
    oncdata() {},
    oncomment() {},
    ondeclaration() {},
    onprocessinginstruction() {},
  };
  if (!Tokenizer) throw new Error("htmlReady() must settle before a page is read");
  const tokenizer = new Tokenizer({ xmlMode: false, decodeEntities: true }, callbacks);
  tokenizer.write(input);
  tokenizer.end();
}

/** The text of the first accepted embed of `elementId` in a page, or null (docs/protocol.md#v7-the-html-fallback). */
export function extractEmbed(html: string, elementId: string): string | null {
  let found: string | null = null;
  readTags(html, new Set(["script"]), (tag, text) => {
    if (!isEmbedStartTag(tag.rawAttrs.replace(/\/$/, ""), elementId)) return false;
    found = text;
    return true;
  });
  return found;
}

const LINKS = new Set(["a", "link"]);

/** `rel` and `href` of every `<a>` and `<link>` that has both, for rel=me checks (docs/decisions.md#verification). */
export function extractLinks(html: string): { rel: string; href: string }[] {
  const links: { rel: string; href: string }[] = [];
  readTags(html, LINKS, (tag) => {
    const rel = tag.attrs.get("rel");
    const href = tag.attrs.get("href");
    if (rel !== undefined && href !== undefined) links.push({ rel, href });
    return links.length >= MAX_LINKS;
  });
  return links;
}
