/**
 * Structured logs (docs/deploying.md#logs): one JSON line per event on stderr, with its level, its
 * component (the word before the message's first colon: "store", "redis", "crawl") and, inside a
 * request, that request's id. Lines below `IDENT_LOG_LEVEL` are not written.
 */
import { extend } from "./objects.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type Logger = Record<LogLevel, (message: string, fields?: Record<string, unknown>) => void>;

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** The longest line written, in bytes (docs/deploying.md#logs): a path or value sent by a client cannot make it longer. */
export const MAX_LINE_BYTES = 1024;
/** A field's text is cut at this many characters first; then, were the line still too long, the fields go. */
const MAX_FIELD_CHARS = 256;

const cut = (text: string, chars: number) => (text.length <= chars ? text : `${text.slice(0, chars)}…`);

/** A value as logged: text cut, numbers and booleans as they are, anything else as cut text. */
function fieldValue(value: unknown): unknown {
  if (typeof value === "number" || typeof value === "boolean" || value === null) return value;
  return cut(typeof value === "string" ? value : String(JSON.stringify(value)), MAX_FIELD_CHARS);
}

/**
 * One event as one JSON line of at most {@link MAX_LINE_BYTES}: each field cut at
 * {@link MAX_FIELD_CHARS} characters, and, were that still too long, the extra fields dropped and
 * the message cut further (`cut: true` says so).
 */
export function logLine(entry: { time: string; level: LogLevel; msg: string } & Record<string, unknown>): string {
  const whole = Object.fromEntries(Object.entries(entry).map(([k, v]) => [cut(k, 64), fieldValue(v)]));
  let line = JSON.stringify(whole);
  if (Buffer.byteLength(line) <= MAX_LINE_BYTES) return line;
  const { time, level, component, request_id: requestId } = whole;
  const kept = { time, level, ...(component ? { component } : {}), ...(requestId ? { request_id: requestId } : {}), cut: true };
  for (let chars = 512; chars > 0; chars = Math.floor(chars / 2)) {
    line = JSON.stringify(extend(kept, { msg: cut(entry.msg, chars) }));
    if (Buffer.byteLength(line) <= MAX_LINE_BYTES) return line;
  }
  return JSON.stringify(kept);
}

/**
 * A logger writing lines at `level` and above with `write`; `requestId` says the request a line is
 * written in, when there is one (the web app's: web/app.ts).
 */
export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  requestId: () => string | undefined = () => undefined,
): Logger {
  const line =
    (at: LogLevel) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      if (ORDER[at] < ORDER[level]) return;
      const component = /^([a-z][a-z ]{1,20}): /.exec(message)?.[1];
      const id = requestId();
      const own = {
        time: new Date().toISOString(),
        level: at,
        ...(component ? { component } : {}),
        msg: message,
        ...(id ? { request_id: id } : {}),
      };
      // The line's own fields first and last: a field of the caller's cannot overwrite them.
      write(logLine(Object.assign({}, own, fields, own)));
    };
  return { debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error") };
}
