/** Exits 1 with a message naming every bad variable when the environment is not a valid configuration (docs/decisions.md#configuration). */
import { configErrorMessage, parseConfig } from "../lib/config";

const parsed = parseConfig(process.env);
if (!parsed.ok) {
  console.error(configErrorMessage(parsed.errors));
  process.exit(1);
}
