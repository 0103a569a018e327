import { beforeAll, describe, expect, it } from "vitest";
import { extractEmbed, extractLinks, htmlReady } from "./embed.ts";

// The readers need htmlparser2 loaded (lib/documents/embed.ts).
beforeAll(htmlReady);

describe("the HTML readers see tags as the HTML tokenizer does", () => {
  it("find start tags with their raw text, skipping comments", () => {
    const html = `<!-- <script type="application/json" id="ident-hub">{"n":0}</script> --><a rel="me" href="/x">y</a><SCRIPT type="application/json" id="ident-hub">1 < 2</SCRIPT>`;
    expect(extractLinks(html)).toEqual([{ rel: "me", href: "/x" }]);
    expect(extractEmbed(html, "ident-hub")).toBe("1 < 2");
  });
  it("do not see tags inside raw-text elements", () => {
    const html = `<script>var s = '<script type="application/json" id="ident-hub">{}</' + 'script>';</script><textarea><a rel=me href=/></textarea>`;
    expect(extractEmbed(html, "ident-hub")).toBeNull();
    expect(extractLinks(html)).toEqual([]);
  });
  it("keep a quoted > inside an attribute value", () => {
    expect(extractLinks(`<a title="a>b" rel="me" href="/">x</a>`)).toEqual([{ rel: "me", href: "/" }]);
  });
  it("an unclosed start tag is not a tag", () => {
    expect(extractLinks(`<a rel="me" href="/x>`)).toEqual([]);
  });
  it("decode entities in attribute values", () => {
    expect(extractLinks(`<a rel="me" href="https://a.example/?x=1&amp;y=2">`)).toEqual([{ rel: "me", href: "https://a.example/?x=1&y=2" }]);
  });
});

describe("hostile pages cost one pass (these would take minutes with a full parse)", () => {
  const M = 2 * 1024 * 1024;
  it.each([
    ["400,000 nested <div>", "<div>".repeat(M / 5)],
    ["700,000 unclosed <a", "<a ".repeat(M / 3)],
    ["2 MiB of <", "<".repeat(M)],
    ["one start tag with 350,000 attributes", `<a ${'x="1" '.repeat(M / 7)}>`],
    // A parser that keeps a stack of open elements searches it for every unmatched end tag.
    ["100,000 open <div> then 100,000 unmatched </b>", "<div>".repeat(100_000) + "</b>".repeat(100_000)],
  ])("%s", (_name, html) => {
    expect(extractEmbed(html, "ident-hub")).toBeNull();
    expect(extractLinks(html)).toEqual([]);
  });
  it("a deeply nested page still yields its embed", () => {
    const html = `${"<div>".repeat(100_000)}<script type="application/json" id="ident-hub">{"a":1}</script>`;
    expect(extractEmbed(html, "ident-hub")).toBe(`{"a":1}`);
  });
});
