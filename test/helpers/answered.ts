import { isRefusal, type Refusal } from "ident-resolver/traffic";

/** The answer of a call that may be refused (docs/architecture.md#traffic); a refusal fails the test, naming it. */
export function answered<T extends object>(value: T | Refusal): T {
  if (isRefusal(value)) throw new Error(`refused (${value.refused}): ${value.message}`);
  return value;
}
