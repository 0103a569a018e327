/**
 * PostgreSQL's COPY text format, both ways, for moving the index (docs/deploying.md#moving-the-index):
 * a row a line, a tab between fields, `\N` for null, and a backslash before a backslash, a newline, a
 * carriage return or a tab of the text (https://www.postgresql.org/docs/current/sql-copy.html).
 */

/** A value as a row to load gives it: booleans as `t`/`f`, numbers in decimal, text as it is. */
export type CopyValue = string | number | boolean | null;

const SPECIAL = /[\\\n\r\t]/;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function field(value: CopyValue): string {
  if (value === null) return "\\N";
  if (typeof value === "boolean") return value ? "t" : "f";
  if (typeof value === "number") return String(value);
  return SPECIAL.test(value) ? value.replace(/[\\\n\r\t]/g, (c) => ESCAPES[c] ?? c) : value;
}

/** One row to load, with its newline. */
export const copyLine = (values: readonly CopyValue[]): string => `${values.map(field).join("\t")}\n`;

/** What a backslash escape of COPY's output stands for (it writes these six, and a backslash). */
const UNESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f", v: "\v" };

function unescape(text: string): string | null {
  if (text === "\\N") return null;
  if (!text.includes("\\")) return text;
  return text.replace(/\\(.)/g, (_, c: string) => UNESCAPES[c] ?? c);
}

/**
 * COPY's output read a field at a time, without a list per row: an export reads millions of fields,
 * and lists of them cost more in garbage than in reading.
 */
export class CopyReader {
  private at = 0;
  private eol = -1;
  constructor(private readonly text: string) {}

  /** Moves to the next row; false when there is none. */
  row(): boolean {
    if (this.eol >= 0) this.at = this.eol + 1;
    if (this.at >= this.text.length) return false;
    const eol = this.text.indexOf("\n", this.at);
    this.eol = eol < 0 ? this.text.length : eol;
    return true;
  }

  /** Whether the row has a field not yet read. */
  more(): boolean {
    return this.at <= this.eol;
  }

  /** The row's next field (null for `\N`, and past its last). */
  field(): string | null {
    if (this.at > this.eol) return null;
    const tab = this.text.indexOf("\t", this.at);
    const end = tab < 0 || tab > this.eol ? this.eol : tab;
    const raw = this.text.slice(this.at, end);
    this.at = end + 1;
    return unescape(raw);
  }
}

/** The rows of COPY's output, each a list of its fields (null for `\N`). */
export function copyRows(text: string): (string | null)[][] {
  const rows: (string | null)[][] = [];
  const reader = new CopyReader(text);
  while (reader.row()) {
    const row: (string | null)[] = [];
    while (reader.more()) row.push(reader.field());
    rows.push(row);
  }
  return rows;
}

/**
 * A text as an SQL literal, for the one statement that cannot take parameters (COPY): quotes doubled,
 * with `standard_conforming_strings` on, so a backslash is a backslash.
 */
export const sqlLiteral = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * A time as COPY writes it with `TimeZone` UTC and `DateStyle` ISO (`2026-01-01 10:00:00.5+00`), as
 * JavaScript's toISOString writes it (`2026-01-01T10:00:00.500Z`): milliseconds, any finer part cut.
 * Checked by its shape, not a pattern: an export writes millions.
 */
export function isoTime(text: string): string {
  const n = text.length;
  const fraction = n === 22 ? "000" : n >= 24 && n <= 29 && text[19] === "." ? `${text.slice(20, n - 3)}00`.slice(0, 3) : null;
  if (fraction === null || text[10] !== " " || text[4] !== "-" || text[13] !== ":" || !text.endsWith("+00")) {
    throw new Error(`a time the export cannot write: ${JSON.stringify(text)}`);
  }
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction}Z`;
}
