/**
 * Once per `npm run test:e2e`: an embedded index made and migrated, closed, for the specs' own servers
 * to copy (e2e/helpers/server.ts). Making one is PGlite's initdb and every migration, about 5 s of a
 * core on two; a copy opens in under 1 s. Its folder goes with the run (test/helpers/scratch.ts).
 */
import path from "node:path";
import { openStore } from "ident-resolver/store";
import { scratchDir } from "../test/helpers/scratch";

export default async function globalSetup(): Promise<void> {
  const dataDir = path.join(scratchDir("ident-e2e-template-"), "data");
  const store = await openStore({ kind: "embedded", dataDir }, () => undefined);
  await store.close();
  // Read by the workers, which start after this (e2e/helpers/server.ts).
  process.env.IDENT_E2E_STORE_TEMPLATE = dataDir;
}
