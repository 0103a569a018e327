/**
 * Contract tests of the framework's private strings against the built app (web/framework.ts,
 * docs/upgrading.md): what Next writes into a page that keeps its runtime still holds what read pages
 * drop, and a read page holds none of it. Each failure names the string and the installed Next.
 */
import { createRequire } from "node:module";
import { expect, test } from "@playwright/test";
import { feedsRuntime, RSC_REQUEST_HEADERS, RUNTIME_CHUNKS, RUNTIME_FEEDS } from "../web/framework";

const NEXT = `Next ${(createRequire(import.meta.url)("next/package.json") as { version: string }).version}`;

/** The inline scripts of `html`, their texts. */
const inlineScripts = (html: string) => [...html.matchAll(/<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? "");

test("a page that keeps the runtime (the check) still carries what read pages drop, as web/framework.ts names it", async ({ request }) => {
  const html = await (await request.get("/check")).text();
  expect(html.includes(`src="${RUNTIME_CHUNKS}`), `${NEXT} no longer serves its runtime's chunks under ${RUNTIME_CHUNKS}`).toBe(true);
  const feeds = inlineScripts(html).filter(feedsRuntime);
  // The RSC payload and the bundler's chunk list: each of RUNTIME_FEEDS's kinds is still written.
  for (const [name, start] of [
    ["the RSC payload", RUNTIME_FEEDS[0]],
    ["the bundler's chunk list", RUNTIME_FEEDS[2]],
  ] as const) {
    expect(
      feeds.some((text) => text.trimStart().replace(/^\(/, "").startsWith(start.replace(/^\(/, ""))),
      `${NEXT} no longer writes ${name} as an inline script starting ${start}; web/script-free.ts would keep it`,
    ).toBe(true);
  }
});

test("a read page holds none of the runtime's scripts (web/script-free.ts)", async ({ request }) => {
  const html = await (await request.get("/reasons")).text();
  expect(html.includes(`src="${RUNTIME_CHUNKS}`)).toBe(false);
  expect(inlineScripts(html).filter(feedsRuntime)).toEqual([]);
});

test("Next answers its router's requests (RSC_REQUEST_HEADERS) with its payload, not the page: the page cache keeps none", async ({
  request,
}) => {
  const asked = await request.get("/reasons", { headers: { [RSC_REQUEST_HEADERS[0]]: "1" } });
  expect(asked.headers()["content-type"], `${NEXT} no longer answers the ${RSC_REQUEST_HEADERS[0]} header with its payload`).toContain(
    "text/x-component",
  );
  expect(asked.headers()["x-ident-page-cache"]).toBeUndefined();
});
