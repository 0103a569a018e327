/**
 * Once per `npm run test:unit`: an embedded index made and migrated, closed, for the tests to copy
 * (test/helpers/engines.ts, `newEmbeddedDir`). Making one is PGlite's initdb and every migration, about
 * 5 s on two cores; a copy opens in under 1 s. A test of making or migrating a store makes its own.
 */
import path from "node:path";
import type { TestProject } from "vitest/node";
import { openStore } from "ident-resolver/store";
import { scratchDir } from "./helpers/scratch";

declare module "vitest" {
  export interface ProvidedContext {
    /** The folder of a new, migrated, closed embedded index. */
    storeTemplate: string;
  }
}

export async function setup(project: TestProject): Promise<void> {
  const dataDir = path.join(scratchDir("ident-template-"), "data");
  const store = await openStore({ kind: "embedded", dataDir });
  await store.close();
  project.provide("storeTemplate", dataDir);
}
