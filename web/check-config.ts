/**
 * Run by `npm start` before the server: exits 1 with a message naming every bad variable when the
 * environment is not a valid configuration (docs/decisions.md#configuration), and when the index
 * cannot be opened or brought up to date (docs/decisions.md#the-index). The store is closed again
 * at once: the server opens its own.
 */
import { configErrorMessage, parseConfig } from "ident-resolver/setup";
import { openStore } from "ident-resolver/store";

const parsed = parseConfig(process.env);
if (!parsed.ok) {
  console.error(configErrorMessage(parsed.errors));
  process.exit(1);
}
try {
  const store = await openStore(parsed.config.store);
  await store.close();
} catch (err) {
  console.error(`ident-resolver: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
