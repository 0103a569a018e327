/**
 * Next calls `register` once when the server starts: the app (its resolver and its index) is built
 * then, so the store is open before the first lookup rather than during it (docs/decisions.md#the-index),
 * and its request handler is put on the bridge, where web/serve.js takes it (web/bridge.ts).
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const [{ app }, { bridge }, { createRequestHandler }] = await Promise.all([
    import("./web/app"),
    import("./web/bridge"),
    import("./web/server"),
  ]);
  const built = app();
  // docs/deploying.md#logs: what Next writes to the console is one log line each, no stack trace.
  built.quietConsole();
  bridge().handler = (next, options) => createRequestHandler(built, next, options);
  // docs/deploying.md#metrics: /metrics on the operators' listener (IDENT_METRICS_ADDR), never on the public port.
  await built.startOperations();
}
