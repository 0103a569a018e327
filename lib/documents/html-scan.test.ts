import { describe, expect, it } from "vitest";
import { extractEmbed, extractLinks } from "./embed";
import { scanTags } from "./html-scan";

const S = new Set(["script", "a"]);

describe("scanTags: a linear scan, as the HTML tokenizer sees tags", () => {
  it("finds start tags with their raw text, skipping comments", () => {
    const html = `<!-- <script id=x>no</script> --><a href="/x">y</a><SCRIPT type="a">1 < 2</SCRIPT>`;
    expect(scanTags(html, S)).toEqual([
      { name: "a", tag: '<a href="/x">', text: "" },
      { name: "script", tag: '<SCRIPT type="a">', text: "1 < 2" },
    ]);
  });
  it("does not see tags inside raw-text elements", () => {
    const html = `<script>var s = '<script type="application/json" id="ident-hub">{}</' + 'script>';</script><textarea><a rel=me href=/></textarea>`;
    expect(scanTags(html, S).map((t) => t.name)).toEqual(["script"]);
    expect(extractEmbed(html, "ident-hub")).toBeNull();
    expect(extractLinks(html)).toEqual([]);
  });
  it("keeps a quoted > inside an attribute value", () => {
    expect(scanTags(`<a title="a>b" href="/">x</a>`, S)[0]?.tag).toBe(`<a title="a>b" href="/">`);
  });
  it("an unclosed start tag ends the scan", () => {
    expect(scanTags(`<a href="/x>`, S)).toEqual([]);
  });
  it("decodes entities in attribute values (node-html-parser reads each tag)", () => {
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
  ])("%s", (_name, html) => {
    expect(extractEmbed(html, "ident-hub")).toBeNull();
    expect(extractLinks(html)).toEqual([]);
  });
  it("a deeply nested page still yields its embed", () => {
    const html = `${"<div>".repeat(100_000)}<script type="application/json" id="ident-hub">{"a":1}</script>`;
    expect(extractEmbed(html, "ident-hub")).toBe(`{"a":1}`);
  });
});
