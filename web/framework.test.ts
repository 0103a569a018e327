/**
 * Contract tests of the framework's private strings (web/framework.ts, docs/upgrading.md): each is
 * checked against the installed React and Next, and fails with a sentence naming the string, the
 * installed version and what relies on it. The built app's own output is checked in
 * e2e/framework.spec.ts.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Writable } from "node:stream";
import { createElement as h, Suspense, type ReactNode } from "react";
import { renderToPipeableStream } from "react-dom/server";
import { describe, expect, it } from "vitest";
import {
  NONCE_REQUEST_HEADER,
  REACT_FAILED_PART,
  REACT_LAST_REVEAL,
  REACT_MARK_FAILED,
  REACT_PART_CLOSES,
  REACT_PART_OPENS,
  RSC_QUERY,
  RSC_REQUEST_HEADERS,
  RUNTIME_FEEDS,
  SERVER_ACTION_HEADER,
} from "./framework";

const require = createRequire(import.meta.url);
const version = (name: string): string => (require(`${name}/package.json`) as { version: string }).version;
const REACT = `React ${version("react-dom")}`;
const NEXT = `Next ${version("next")}`;

/** What the installed React streams for a page with a part that arrives late, one that fails late and one that fails at once. */
async function reactStream(): Promise<string> {
  const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
  async function Late(): Promise<ReactNode> {
    return later(10, h("p", null, "late"));
  }
  async function FailsLate(): Promise<ReactNode> {
    await later(10, null);
    throw new Error("a part's fault");
  }
  function FailsAtOnce(): ReactNode {
    throw new Error("a fault before the shell");
  }
  const tree = h(
    "html",
    null,
    h(
      "body",
      null,
      h(Suspense, { fallback: h("p", null, "loading") }, h(Late)),
      h(Suspense, { fallback: h("p", null, "loading") }, h(FailsLate)),
      h(Suspense, { fallback: h("p", null, "loading") }, h(FailsAtOnce)),
    ),
  );
  return new Promise((resolve, reject) => {
    let out = "";
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        out += chunk.toString();
        done();
      },
      final(done) {
        resolve(out);
        done();
      },
    });
    const stream = renderToPipeableStream(tree, { onShellReady: () => stream.pipe(sink), onShellError: reject, onError: () => undefined });
  });
}

describe(`React's streaming scripts (${REACT})`, () => {
  const streamed = reactStream();
  it.each([
    [REACT_LAST_REVEAL, "the time of its last reveal, which components/reveal-at-once.tsx pins so parts show at once"],
    [REACT_MARK_FAILED, "its call that marks a part failed after the shell, which web/failed-parts.ts wraps"],
    [REACT_FAILED_PART, "its comment for a part that failed before the shell, which web/failed-parts.ts finds"],
    [`<!--${REACT_PART_CLOSES}-->`, "its comment that closes a streamed part, where web/failed-parts.ts stops"],
  ])("%s: %s", async (text, why) => {
    expect((await streamed).includes(text), `${REACT} no longer streams ${JSON.stringify(text)}: ${why}. See docs/upgrading.md.`).toBe(
      true,
    );
  });
  it("opens each streamed part with a comment whose text starts with what web/failed-parts.ts counts", async () => {
    const opened = /<!--([^>]*?)-->/.exec((await streamed).slice((await streamed).indexOf("<body")))?.[1] ?? "";
    expect(opened.startsWith(REACT_PART_OPENS), `${REACT} opens a streamed part with <!--${opened}-->, not "${REACT_PART_OPENS}…"`).toBe(
      true,
    );
  });
});

describe(`Next's request headers and inline feeds (${NEXT})`, () => {
  const headers = require("next/dist/client/components/app-router-headers.js") as Record<string, unknown>;
  it("the headers of requests Next answers with its router's payload, which the page cache never keeps", () => {
    expect(
      [...RSC_REQUEST_HEADERS].sort(),
      `${NEXT} sends its router's requests with other headers; web/framework.ts RSC_REQUEST_HEADERS`,
    ).toEqual([...(headers.FLIGHT_HEADERS as string[])].sort());
    expect(headers.NEXT_RSC_UNION_QUERY, `${NEXT} marks its router's requests with another query; web/framework.ts RSC_QUERY`).toBe(
      RSC_QUERY,
    );
  });
  it("the header of a Server Action call, which the front door refuses", () => {
    expect(headers.ACTION_HEADER, `${NEXT} calls Server Actions with another header; web/framework.ts SERVER_ACTION_HEADER`).toBe(
      SERVER_ACTION_HEADER,
    );
  });
  it("the request header Next reads a page's nonce from, which the server sets", () => {
    const reader = readFileSync(require.resolve("next/dist/server/app-render/get-script-nonce-from-header.js"), "utf8");
    expect(
      reader.includes(`'${NONCE_REQUEST_HEADER}'`),
      `${NEXT} no longer reads the nonce from the request's ${NONCE_REQUEST_HEADER}`,
    ).toBe(true);
  });
  it("the inline script that carries the RSC payload, which read pages drop", () => {
    const writer = readFileSync(require.resolve("next/dist/server/app-render/use-flight-response.js"), "utf8");
    const feed = RUNTIME_FEEDS[0];
    expect(writer.includes(feed), `${NEXT} no longer writes its payload as ${feed}; web/script-free.ts would keep it`).toBe(true);
  });
});
