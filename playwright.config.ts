import path from "node:path";
import { defineConfig } from "@playwright/test";
import { scratchDir } from "./test/helpers/scratch";

const PORT = 3100;

/**
 * The tests act as a person's browser. Headless Chromium says "HeadlessChrome", which the app
 * treats as an automated client (whole pages, web/clients.ts); the JSON-LD tests use that one too.
 */
export const BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";

/**
 * Browser tests against `next start` on the sample network (scripts/demo.js), in Debian's Chromium:
 * nothing is downloaded. The fetch timeout is 6 s so the 5 s streaming publisher still answers and
 * the 15 s one times out quickly.
 */
export default defineConfig({
  testDir: "e2e",
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: true,
  workers: 2,
  retries: 0,
  reporter: [["list"]],
  outputDir: "test-results",
  // One migrated index for the specs' own servers to copy (e2e/global-setup.ts).
  globalSetup: "./e2e/global-setup.ts",
  use: {
    baseURL: `http://localhost:${PORT}`,
    browserName: "chromium",
    userAgent: BROWSER_UA,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--disable-quic",
      ],
    },
  },
  // Lighthouse measures the main thread of the page it audits: it runs last, alone, so that the
  // other specs' servers and browsers do not take the machine's two cores while it times the page.
  projects: [
    { name: "pages", testIgnore: /lighthouse\.spec\.ts$/ },
    { name: "lighthouse", testMatch: /lighthouse\.spec\.ts$/, dependencies: ["pages"] },
  ],
  webServer: {
    command: "node scripts/demo.js --quiet",
    url: `http://localhost:${PORT}/`,
    timeout: 180_000,
    reuseExistingServer: false,
    stdout: "ignore",
    stderr: "pipe",
    // Stopped as a person stops the demo, so that the sample network and the index remove their
    // folders (test/helpers/scratch.ts); SIGKILL, Playwright's default, left them behind.
    gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
    // Documents go stale after 3 s here, so the stale state can be seen without waiting an hour. Every
    // test is a client on one address, so the per-client, per-host and per-address limits are set out
    // of reach (e2e/limits.spec.ts and e2e/refusals.spec.ts test them on servers of their own).
    env: {
      PORT: String(PORT),
      IDENT_FETCH_TIMEOUT_MS: "6000",
      // One JSON line per request at info would drown the test output; warnings and errors are kept.
      IDENT_LOG_LEVEL: "warn",
      IDENT_CACHE_FRESH_S: "3",
      IDENT_PUBLIC_URL: "https://ident.example",
      IDENT_COLD_LOOKUPS_PER_MIN: "1000000",
      IDENT_HOST_BUDGET_PER_MIN: "1000000",
      IDENT_SEARCHES_PER_MIN: "1000000",
      IDENT_STORE_READS_PER_MIN: "1000000",
      IDENT_ADDRESS_BUDGET_PER_MIN: "1000000",
      // A fresh embedded index for each run, in a folder of its own, removed when the run ends.
      IDENT_DATA_DIR: path.join(scratchDir("ident-e2e-"), "data"),
      // Tests here want cold caches where they say so: no background resolutions. The demo's
      // discovery is tested on a server of its own (e2e/index.spec.ts).
      IDENT_CRAWL: "0",
    },
  },
});
