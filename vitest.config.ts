import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import LongFirst from "./test/sequencer";

export default defineConfig({
  // The components' imports (`@/lib/...`, tsconfig.json's paths), for the tests that render them.
  resolve: { alias: { "@": fileURLToPath(new URL(".", import.meta.url)) } },
  test: {
    include: [
      "lib/**/*.test.ts",
      "web/**/*.test.ts",
      "components/**/*.test.ts",
      "bench/**/*.test.ts",
      "cli/**/*.test.ts",
      "test/**/*.test.ts",
      "scripts/**/*.test.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two files at once whatever the cores (Vitest takes one fewer than there are: one, on two cores):
    // most of a file's time is spent waiting on the processes and servers it starts.
    maxWorkers: 2,
    // One migrated embedded index for the tests to copy (test/global-setup.ts).
    globalSetup: ["test/global-setup.ts"],
    // The files of a minute or more first, so that none ends the run alone (test/sequencer.ts).
    sequence: { sequencer: LongFirst },
  },
});
