/**
 * The brand link's accessible name contains the words it shows (WCAG 2.5.3, label in name; the rule
 * Lighthouse audits as label-content-name-mismatch): someone who says "click ident resolver" reaches it.
 */
import { Parser } from "htmlparser2";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { SiteHeader } from "./site-header";

/**
 * The first link of `html`: its accessible name (its aria-label, or its text, less what is aria-hidden)
 * and the text it shows (less what is also visually hidden), spaces collapsed.
 */
function brandLink(html: string): { name: string; shown: string; labelledBy: boolean } {
  let depth = 0;
  let hiddenFrom = Infinity;
  let unseenFrom = Infinity;
  let label: string | null = null;
  let labelledBy = false;
  let text = "";
  let shown = "";
  let inLink = false;
  let done = false;
  const parser = new Parser({
    onopentag(name, attrs) {
      if (done) return;
      if (name === "a" && !inLink) {
        inLink = true;
        label = attrs["aria-label"] ?? null;
        labelledBy = attrs["aria-labelledby"] !== undefined;
      }
      depth++;
      if (attrs["aria-hidden"] === "true") hiddenFrom = Math.min(hiddenFrom, depth);
      if ((attrs.class ?? "").split(/\s+/).includes("visually-hidden")) unseenFrom = Math.min(unseenFrom, depth);
    },
    ontext(t) {
      if (!inLink || done || depth >= hiddenFrom) return;
      text += t;
      if (depth < unseenFrom) shown += t;
    },
    onclosetag(name) {
      if (done) return;
      if (depth === hiddenFrom) hiddenFrom = Infinity;
      if (depth === unseenFrom) unseenFrom = Infinity;
      depth--;
      if (name === "a" && inLink) done = true;
    },
  });
  parser.end(html);
  const squash = (s: string) => s.replace(/\s+/g, " ").trim();
  return { name: squash(label ?? text), shown: squash(shown), labelledBy };
}

const nameHoldsShown = ({ name, shown }: { name: string; shown: string }) => name.toLowerCase().includes(shown.toLowerCase());

describe("the site header's brand link (WCAG 2.5.3)", () => {
  it("shows 'ident resolver' and is named 'ident resolver, home': the name begins with what is seen", () => {
    const link = brandLink(renderToStaticMarkup(createElement(SiteHeader)));
    expect(link).toEqual({ name: "ident resolver, home", shown: "ident resolver", labelledBy: false });
    expect(link.name.startsWith(link.shown)).toBe(true);
    expect(nameHoldsShown(link)).toBe(true);
  });

  it("the check refuses the link as it was: shown 'identresolver', named 'ident resolver, home'", () => {
    const before = brandLink(
      '<header class="site-header"><a href="/" class="brand" aria-label="ident resolver, home">ident<span>resolver</span></a></header>',
    );
    expect(before).toEqual({ name: "ident resolver, home", shown: "identresolver", labelledBy: false });
    expect(nameHoldsShown(before)).toBe(false);
  });
});
