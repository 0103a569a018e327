/**
 * Structured logs (docs/deploying.md#logs): one JSON line per event on stderr, with its level, its
 * component (the word before the message's first colon: "store", "redis", "crawl") and, inside a
 * request, that request's id. Lines below `IDENT_LOG_LEVEL` are not written.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type Logger = Record<LogLevel, (message: string, fields?: Record<string, unknown>) => void>;

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * The request in progress, set by the production server (web/serve.js) around each request. On
 * `globalThis` under a symbol-like name so that the server, outside the bundle, and every copy of
 * this module inside it share one.
 */
const holder = globalThis as typeof globalThis & { __identRequest?: AsyncLocalStorage<{ id: string }> };
export const requestContext = (holder.__identRequest ??= new AsyncLocalStorage<{ id: string }>());

export function createLogger(level: LogLevel, write: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Logger {
  const line =
    (at: LogLevel) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      if (ORDER[at] < ORDER[level]) return;
      const component = /^([a-z][a-z ]{1,20}): /.exec(message)?.[1];
      const request = requestContext.getStore();
      write(
        JSON.stringify({
          time: new Date().toISOString(),
          level: at,
          ...(component ? { component } : {}),
          msg: message,
          ...(request ? { request_id: request.id } : {}),
          ...fields,
        }),
      );
    };
  return { debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error") };
}
