import { beforeAll, describe, expect, it } from "vitest";
import { extractEmbed, extractLinks, isEmbedStartTag, htmlReady } from "./embed.ts";

// The readers need htmlparser2 loaded (lib/documents/embed.ts).
beforeAll(htmlReady);

describe("V7 / docs/decisions.md#the-html-fallback: the exact accepted <script> forms", () => {
  it.each([
    [`type="application/json" id="ident-hub"`, true],
    [`id="ident-hub" type="application/json"`, true],
    [`type='application/json' id='ident-hub'`, true],
    [`id='ident-hub' type="application/json"`, true],
    [`  type="application/json"   id="ident-hub"  `, true],
    [`type=application/json id=ident-hub`, false],
    [`type="application/json" id="ident-hub" async`, false],
    [`type="application/json" id="ident-hub" data-x="1"`, false],
    [`TYPE="application/json" ID="ident-hub"`, false],
    [`type="Application/JSON" id="ident-hub"`, false],
    [`type="application/ld+json" id="ident-hub"`, false],
    [`type="application/json" id="ident-property"`, false],
    [`type="application/json" type="application/json"`, false],
    [`type="application/json"`, false],
    [`type="application/json"id="ident-hub"`, false],
  ])("%s → %s", (attrs, accepted) => {
    expect(isEmbedStartTag(attrs, "ident-hub")).toBe(accepted);
  });

  it("returns the raw text of the first accepted element", () => {
    const html = `<html><head>
      <script type="application/json" id="ident-hub" data-x>{"n":0}</script>
      <script id="ident-hub" type="application/json">{"n":1,"s":"&amp;</b>"}</script>
      <script type="application/json" id="ident-hub">{"n":2}</script></head></html>`;
    expect(extractEmbed(html, "ident-hub")).toBe(`{"n":1,"s":"&amp;</b>"}`);
  });
  it("ignores commented-out elements and elements with another id", () => {
    const html = `<!-- <script type="application/json" id="ident-hub">{"n":1}</script> -->
      <script type="application/json" id="ident-property">{"n":2}</script>`;
    expect(extractEmbed(html, "ident-hub")).toBeNull();
    expect(extractEmbed(html, "ident-property")).toBe(`{"n":2}`);
  });
  it("finds the embed in the body as well as the head", () => {
    expect(
      extractEmbed(`<body><div><script type="application/json" id="ident-credential">{}</script></div></body>`, "ident-credential"),
    ).toBe("{}");
  });
  it("survives hostile markup", () => {
    const html = `<script type="application/json" id="ident-hub">{"a":"<script>"}</script><<<<>>>><div` + "<".repeat(10_000);
    expect(extractEmbed(html, "ident-hub")).toBe(`{"a":"<script>"}`);
  });
});

describe("extractLinks", () => {
  it("reads rel and href of <a> and <link>", () => {
    const html = `<link rel="me" href="https://a.example/"><a rel="Me nofollow" href="/x">x</a><a href="https://b.example/">no rel</a>`;
    expect(extractLinks(html)).toEqual([
      { rel: "me", href: "https://a.example/" },
      { rel: "Me nofollow", href: "/x" },
    ]);
  });
});
