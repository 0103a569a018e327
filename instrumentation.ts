/**
 * Next calls `register` once when the server starts: the app (its resolver and its index) is built
 * then, so the store is open before the first lookup rather than during it (docs/decisions.md#the-index).
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { app } = await import("./web/app");
  const built = app();
  // docs/deploying.md#logs: what Next writes to the console is one log line each, no stack trace.
  built.quietConsole();
  // docs/deploying.md#metrics: /metrics on the operators' listener (IDENT_METRICS_ADDR), never on the public port.
  await built.startOperations();
}
