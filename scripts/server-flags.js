// The flags of Node the server runs with (docs/decisions.md#memory), for everything that starts it:
// `npm start` and `npm run dev` (package.json) and the service file (deploy/ident@.service), both
// checked against this by scripts/server-flags.test.ts; `npm run demo`, `npm run fleet`, the bench
// and the load runs; and `ident store import` and `export`, which bin/ident.js runs again with them.
// They cannot be set once the server runs, as web/serve.js sets the heap's growth: V8 sizes its young
// generation as it starts.
//
// --max-semi-space-size=8: Node 24's V8 lets the young generation grow to several times Node 20's
// (16 MB a half); while pages come fast the garbage in it is RSS. 10,000 cold pages (npm run load --
// pages) took the app +332 MB at peak on Node 24 and +126 MB with 16, in 102 s against 108; later
// +147 MB in 208.7 s with 16 and +136 MB in 189.0 s with 8. A notices fan-out to 10,000 callbacks
// (docs/notices.md): +57.8–66.0 MB with 16, +42.1–52.0 with 8. Warm pages with 8 ÷ 16: 0.94–1.17.
export const SERVER_NODE_FLAGS = ["--max-semi-space-size=8"];

// docs/decisions.md#memory: the heap grows by 20 % at a time. Set by web/serve.js as it starts (a V8
// flag that can be), and given to the bench's processes that stand for the server (bench/notices.ts).
export const HEAP_GROWING_FLAG = "--heap-growing-percent=20";
