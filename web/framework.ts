/**
 * The framework's private strings, in one place (docs/architecture.md#the-framework-seam,
 * docs/upgrading.md). Next and React document none of these; the project leans on each for a reason
 * written beside it. Each has a contract test (web/framework.test.ts for React's and Next's installed
 * code, e2e/framework.spec.ts for the built app) that names the string and the installed version when
 * an upgrade moves it. Nowhere else in the source does one appear.
 */

/**
 * Inline scripts whose only reader is Next's client runtime, which read pages do not ship
 * (web/script-free.ts): the RSC payload the App Router streams for hydration, and Turbopack's list of
 * chunks to load. Each as the start of the script's text.
 */
export const RUNTIME_FEEDS = ["self.__next_f", "(self.__next_f", '(globalThis["TURBOPACK"]'] as const;

/** Where Next serves its client runtime's chunks: a script with this `src` prefix is the runtime. */
export const RUNTIME_CHUNKS = "/_next/";

/**
 * React's inline streaming scripts: `$RT` is when React last revealed a streamed part (each waits
 * 300 ms after it: components/reveal-at-once.tsx pins it); `$RX` marks a streamed part failed after
 * the shell; a part that failed before the shell is sent as the comment `<!--$!-->`
 * (web/failed-parts.ts says either in words).
 */
export const REACT_LAST_REVEAL = "$RT";
export const REACT_MARK_FAILED = "$RX";
export const REACT_FAILED_PART = "<!--$!-->";
/** A streamed part sits between comments: its opening one's text starts with `$`, its closing one's is `/$`. */
export const REACT_PART_OPENS = "$";
export const REACT_PART_CLOSES = "/$";

/**
 * Request headers with which Next answers something other than the page's HTML (its router's RSC
 * payload, prefetches), and the query it adds to such requests: the page cache never keeps those.
 */
export const RSC_REQUEST_HEADERS = [
  "rsc",
  "next-router-state-tree",
  "next-router-prefetch",
  "next-hmr-refresh",
  "next-router-segment-prefetch",
] as const;
export const RSC_QUERY = "_rsc";

/** The request header of a Server Action call; this app has none, so the front door refuses it (web/front.ts). */
export const SERVER_ACTION_HEADER = "next-action";

/**
 * The request header Next reads a page's script nonce from (documented in Next's guide to Content
 * Security Policy, where a proxy sets it): the server sets it before Next renders (web/server.ts).
 */
export const NONCE_REQUEST_HEADER = "content-security-policy";

/** Whether an inline script's text only feeds Next's runtime. */
export const feedsRuntime = (text: string): boolean => {
  const start = text.trimStart();
  return RUNTIME_FEEDS.some((feed) => start.startsWith(feed) && !/[\w$]/.test(start[feed.length] ?? " "));
};

/**
 * React holds back each streamed part until 300 ms after the one shown before it (its reveal waits
 * for the last reveal's time plus 300 ms). Pinned to long ago, that time lets every part show as
 * soon as it arrives (docs/decisions.md#cold-pages). The parts replace placeholders of their own size.
 */
export const REVEAL_AT_ONCE_SCRIPT = `Object.defineProperty(window,${JSON.stringify(REACT_LAST_REVEAL)},{configurable:true,get:function(){return -1e9},set:function(){}});`;
