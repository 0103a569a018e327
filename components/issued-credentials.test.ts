/**
 * An issuer's page of credentials (docs/decisions.md#search): a hundred a page, with a link to the
 * next while there is one and to the first from any other; what holders wrote stays text.
 */
import { Parser } from "htmlparser2";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { IssuedCredential, IssuedPage } from "ident-resolver/store";
import { IssuedCredentials } from "./issued-credentials";

const credential = (i: number, extra: Partial<IssuedCredential> = {}): IssuedCredential => ({
  id: `@h${i}@big.test/member`,
  title: "Member",
  holder: { domain: `h${i}.example`, name: `Holder ${i}`, status: "accepted" },
  verified: i % 2 === 0,
  reason: i % 2 === 0 ? null : "no_backlink",
  last_checked_at: "2026-11-29T10:00:00.000Z",
  ...extra,
});

/** The page's links as [text, href, rel], and its text. */
function read(page: IssuedPage, cursor: string | null): { links: [string, string, string | null][]; text: string; scripts: number } {
  const html = renderToStaticMarkup(createElement(IssuedCredentials, { domain: "big.test", issued: page, cursor }));
  const links: [string, string, string | null][] = [];
  let open: { href: string; rel: string | null; text: string } | null = null;
  let text = "";
  let scripts = 0;
  new Parser({
    onopentag(name, attrs) {
      if (name === "script") scripts++;
      if (name === "a") open = { href: attrs.href ?? "", rel: attrs.rel ?? null, text: "" };
    },
    ontext(t) {
      text += t;
      if (open) open.text += t;
    },
    onclosetag(name) {
      if (name === "a" && open) links.push([open.text, open.href, open.rel]);
      if (name === "a") open = null;
    },
  }).end(html);
  return { links, text, scripts };
}

describe("an issuer's page of credentials", () => {
  it("links the next page while there is one, and the first from any page but the first", () => {
    const credentials = Array.from({ length: 100 }, (_, i) => credential(i));
    const first = read({ credentials, next: "Ym9va21hcms" }, null);
    expect(first.links.filter(([, , rel]) => rel === "next")).toEqual([["Next page", "/issuer/big.test?after=Ym9va21hcms", "next"]]);
    expect(first.links.map(([t]) => t)).not.toContain("First page");
    expect(first.links.filter(([t]) => t.startsWith("Holder"))).toHaveLength(100);

    const last = read({ credentials: credentials.slice(0, 3), next: null }, "Ym9va21hcms");
    expect(last.links.filter(([t]) => t === "First page" || t === "Next page")).toEqual([["First page", "/issuer/big.test", null]]);
  });

  it("says each verdict in words, and keeps what a holder wrote as text", () => {
    const hostile = '<script>alert(1)</script><img src=x onerror="alert(2)">';
    const { text, scripts, links } = read(
      { credentials: [credential(1, { title: hostile, holder: { domain: "h1.example", name: hostile, status: "accepted" } })], next: null },
      null,
    );
    expect(scripts).toBe(0);
    expect(text).toContain(hostile);
    expect(text).toMatch(/✗ Not verified: .+/);
    expect(links[0]?.[1]).toBe("/entity/h1.example");
  });
});
