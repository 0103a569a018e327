/**
 * Read pages ship no framework script (docs/decisions.md#cold-pages). A result page is read, not
 * used: everything it shows is server-rendered HTML, its streamed parts are revealed by React's own
 * inline scripts, its links and forms work as plain HTML. The App Router still sends its runtime
 * (about 580 KB of script, and the page's RSC payload again as inline scripts); a browser on a cold
 * page spent its main thread, and on a small machine the server's CPU, on them while the entity's
 * header waited. So, on read pages (`scriptFree` in their row of web/routes.ts), this removes from the HTML Next
 * writes:
 *
 * - scripts whose `src` is the runtime's chunks, and `<link rel="preload" as="script">` /
 *   `rel="modulepreload"` for them;
 * - inline scripts that only feed the runtime (web/framework.ts: `RUNTIME_FEEDS`).
 *
 * Everything else stays: React's reveals, JSON-LD, `<noscript>`, the app's own inline scripts. A
 * dropped tag that carried an id leaves an empty `<template>` with it: the bundler's bootstrap script
 * carries React's shell id, which an experimental React points a render-blocking
 * `<link rel="expect">` at; without the element, first paint would wait for the last byte. Pages with
 * client behaviour (the publisher's check with its copy buttons, error pages with "try again") keep
 * the runtime. The rewrite is a layer of web/response.ts, above compression (Next's own is off).
 */
import { StringDecoder } from "node:string_decoder";
import { feedsRuntime, RUNTIME_CHUNKS } from "./framework";

/** Whether a complete `<script …>…</script>` or `<link …>` element belongs to the framework's runtime. */
export function isRuntimeTag(tag: string): boolean {
  const open = tag.slice(0, tag.indexOf(">") + 1);
  if (open.startsWith("<link")) {
    const rel = /\srel="([^"]*)"/.exec(open)?.[1] ?? "";
    return rel === "modulepreload" || (rel === "preload" && /\sas="script"/.test(open));
  }
  if (/\ssrc="([^"]*)"/.exec(open)?.[1]?.startsWith(RUNTIME_CHUNKS)) return true;
  return feedsRuntime(tag.slice(open.length, tag.length - "</script>".length));
}

const OPENERS = ["<script", "<link"];

/** What stands in for a dropped tag: nothing, or an empty template keeping its id. */
function placeholderOf(tag: string): string {
  const id = /\sid="([^"]*)"/.exec(tag.slice(0, tag.indexOf(">") + 1))?.[1];
  return id === undefined ? "" : `<template id="${id}"></template>`;
}

/**
 * Removes the runtime's tags from HTML that arrives in pieces, cut anywhere: a tag is held until it
 * is whole, everything before it passes at once. React escapes `<` in text and attributes, and in
 * inline JSON (`\u003c`), so `<script` and `<link` are only ever tags.
 */
export class RuntimeStripper {
  private pending = "";
  /** How far into a held tag its end has been looked for: a long inline script is not scanned again from its start. */
  private searched = 0;
  private readonly decoder = new StringDecoder("utf8");

  /** What of `chunk` (with what was held) can be sent now. */
  push(chunk: Buffer | string): string {
    // Strings too go through the decoder, so one never overtakes a character cut at a piece's end.
    this.pending += this.decoder.write(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    let out = "";
    let from = 0;
    // Where each opener next occurs in this text, found once and reused until passed: one scan per
    // push however many tags a piece holds (Next sends the claims that settle together as one piece).
    const found = new Map<string, number>();
    for (;;) {
      const at = nextOpener(this.pending, from, found);
      if (at === -1) {
        // Hold a tail that could be the start of an opener ("<scr").
        const lt = this.pending.lastIndexOf("<");
        const keep = lt >= from && OPENERS.some((o) => o.startsWith(this.pending.slice(lt))) ? lt : this.pending.length;
        out += this.pending.slice(from, keep);
        this.pending = this.pending.slice(keep);
        return out;
      }
      out += this.pending.slice(from, at);
      const end = tagEnd(this.pending, at, at === 0 ? Math.max(0, this.searched - "</script>".length) : at);
      if (end === -1) {
        this.pending = this.pending.slice(at);
        this.searched = this.pending.length;
        return out;
      }
      this.searched = 0;
      const tag = this.pending.slice(at, end);
      if (!isRuntimeTag(tag)) out += tag;
      else out += placeholderOf(tag);
      from = end;
    }
  }

  /** Whatever is still held, as it came: a tag cut off by the end of the page is not ours to judge. */
  end(): string {
    const rest = this.pending + this.decoder.end();
    this.pending = "";
    this.searched = 0;
    return rest;
  }
}

function nextOpener(text: string, from: number, found: Map<string, number>): number {
  let best = -1;
  for (const opener of OPENERS) {
    let at = found.get(opener);
    if (at === undefined || (at !== -1 && at < from)) {
      at = text.indexOf(opener, from);
      // `<scriptx` or `<linked` is not the element.
      while (at !== -1 && /[\w-]/.test(text[at + opener.length] ?? " ")) at = text.indexOf(opener, at + 1);
      found.set(opener, at);
    }
    if (at !== -1 && (best === -1 || at < best)) best = at;
  }
  return best;
}

/** Where the element starting at `at` ends (after `</script>` or the link's `>`), or -1 when not yet arrived. */
function tagEnd(text: string, at: number, searchFrom: number): number {
  if (text.startsWith("<link", at)) {
    const gt = text.indexOf(">", searchFrom);
    return gt === -1 ? -1 : gt + 1;
  }
  const close = text.indexOf("</script>", searchFrom);
  return close === -1 ? -1 : close + "</script>".length;
}
