/**
 * The lenient reading every document gets (docs/decisions.md#validation): a required part that is
 * wrong fails the document or the entry; an optional field that is wrong is dropped with a warning.
 */
import { sha256Hex } from "../hash.ts";
import type { z } from "zod";
import { idKey } from "../protocol/ids.ts";
import { clipDescription, clipName, cutBytes, MAX_ID_BYTES, safeUrl, utf8Bytes, wellFormed } from "./display-limits.ts";
import { isRecord } from "./json.ts";
import { error, warning, type Problem } from "./problem.ts";

/** Warnings listed one by one about a single array, before the rest are counted in one line. */
export const MAX_LISTED_WARNINGS = 20;

/**
 * Entries of one list reported claim by claim; past this, one warning counts the rest, so a 1 MiB
 * document of 350,000 tiny entries cannot become a result of tens of megabytes.
 */
export const MAX_REPORTED_ENTRIES = 1000;

/** The outcome of reading a counterpart document: the document, or the problems that make it invalid. */
export type DocumentParse<T> = { ok: true; doc: T; problems: Problem[] } | { ok: false; problems: Problem[] };

/**
 * How a field's text is kept (docs/decisions.md#validation): a name's or a description's, cut at its
 * length; a URL or an id, read whole up to {@link MAX_ID_BYTES} or not at all (cut, it would name
 * something else). Fields not named are names.
 */
export type Kept = "name" | "description" | "url" | "id";

const thousands = (n: number) => n.toLocaleString("en-US");

/**
 * Reads the optional fields of an object leniently: a present field that fails its schema is dropped
 * with an `invalid_field` warning at its path; text is kept as `kept` says, a URL or id too long to read
 * dropped with an `invalid_field` warning in words; a URL field that is not an absolute http(s) URL is
 * kept as text with an `unsafe_url` warning.
 */
export function lenientFields<S extends Record<string, z.ZodType>>(
  obj: Record<string, unknown>,
  shape: S,
  path: string,
  problems: Problem[],
  kept: { [K in keyof S]?: Kept } = {},
): { [K in keyof S]?: z.output<S[K]> } {
  const out: { [K in keyof S]?: z.output<S[K]> } = {};
  for (const [key, schema] of Object.entries(shape) as [keyof S & string, z.ZodType][]) {
    if (!(key in obj) || obj[key] === undefined) continue;
    const where = path ? `${path}.${key}` : key;
    const parsed = schema.safeParse(obj[key]);
    if (!parsed.success || parsed.data === undefined) {
      problems.push(warning("invalid_field", `${where} has the wrong type and was ignored`, where));
      continue;
    }
    const value = typeof parsed.data === "string" ? keptText(parsed.data, kept[key] ?? "name", where, problems) : parsed.data;
    if (value !== undefined) out[key] = value as z.output<S[typeof key]>;
  }
  return out;
}

/** One field's text as it is kept, or undefined for a URL or id too long to read (with its warning). */
function keptText(text: string, how: Kept, where: string, problems: Problem[]): string | undefined {
  if (how === "name") return clipName(text);
  if (how === "description") return clipDescription(text);
  const bytes = utf8Bytes(text);
  if (bytes > MAX_ID_BYTES) {
    const what = how === "url" ? "a URL" : "an id";
    problems.push(
      warning(
        "invalid_field",
        `${where} is ${thousands(bytes)} bytes long; ${what} is read up to ${thousands(MAX_ID_BYTES)} bytes, and it was ignored`,
        where,
      ),
    );
    return undefined;
  }
  if (how === "url" && safeUrl(text) === null) {
    problems.push(warning("unsafe_url", `${where} is not an absolute https: or http: URL; shown as text`, where));
  }
  return text;
}

/**
 * An entry's id too long to read (V2, docs/decisions.md#validation): the problem that makes the entry
 * `invalid_entry`, in words; null when it is not.
 */
export function idTooLong(id: string, path: string): Problem | null {
  const bytes = utf8Bytes(id);
  if (bytes <= MAX_ID_BYTES) return null;
  const where = `${path}.id`;
  return error(
    "invalid_entry",
    `${where} is ${thousands(bytes)} bytes long; an id is read up to ${thousands(MAX_ID_BYTES)} bytes (UTF-8)`,
    where,
  );
}

/**
 * The id an entry whose id is too long to read keeps (docs/decisions.md#validation): cut, then the
 * start of the whole id's SHA-256, so that two long ids sharing their first kilobyte stay two claims.
 * At most {@link MAX_ID_BYTES}.
 */
const keptLongId = (text: string) => `${cutBytes(text, MAX_ID_BYTES - 24)} sha256:${sha256Hex(wellFormed(text)).slice(0, 16)}`;

/** One entry of `properties[]`, `credentials[]` or `other_connections[]`, validated alone (docs/protocol.md#v2-entries-stand-alone). */
export type Entry<T> = {
  index: number;
  /** The id as published, when it is a string; one too long to read, cut (docs/decisions.md#validation). */
  id: string | null;
  /** The entry exactly as published. */
  raw: unknown;
  problems: Problem[];
} & ({ ok: true; value: T } | { ok: false; reason: "invalid_entry" | "duplicate" });

/** An entry's id when it is a string. */
const stringId = (raw: unknown): string | null => (isRecord(raw) && typeof raw.id === "string" ? raw.id : null);

/**
 * Reads one list of an entity document entry by entry (V2): a bad entry is `invalid_entry` (an id too
 * long to read among them, docs/decisions.md#validation), a repeated id (case-insensitively, V6) is
 * `duplicate`, and the rest goes on.
 */
export function readEntries<T>(
  value: unknown,
  field: string,
  problems: Problem[],
  read: (entry: unknown, path: string, problems: Problem[]) => T | null,
): Entry<T>[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push(warning("invalid_field", `${field} is not an array and was ignored`, field));
    return [];
  }
  if (value.length > MAX_REPORTED_ENTRIES) {
    problems.push(
      warning(
        "too_many_entries",
        `${field} has ${value.length} entries; only the first ${MAX_REPORTED_ENTRIES} are reported, and the rest are ignored`,
        field,
      ),
    );
  }
  const seen = new Set<string>();
  return value.slice(0, MAX_REPORTED_ENTRIES).map((raw, index): Entry<T> => {
    const path = `${field}[${index}]`;
    const entryProblems: Problem[] = [];
    const id = stringId(raw);
    const tooLong = id === null ? null : idTooLong(id, path);
    if (id !== null && tooLong) return { index, id: keptLongId(id), raw, problems: [tooLong], ok: false, reason: "invalid_entry" };
    const parsed = read(raw, path, entryProblems);
    if (parsed === null) return { index, id, raw, problems: entryProblems, ok: false, reason: "invalid_entry" };
    const key = idKey(id ?? "");
    if (seen.has(key)) {
      entryProblems.push(error("duplicate", `${path} repeats the id ${id} of an earlier entry`, path));
      return { index, id, raw, problems: entryProblems, ok: false, reason: "duplicate" };
    }
    seen.add(key);
    return { index, id, raw, problems: entryProblems, ok: true, value: parsed };
  });
}

/**
 * `parse`, remembered per parsed JSON value and `key` while the value lives. A cached document's JSON
 * value is parsed once (lib/resolver/memo.ts), so a warm page does not validate it again on every
 * request. Results are shared: callers copy before they add to them.
 */
export function parsedOnce<R>(parse: (value: unknown, key: string) => R): (value: unknown, key: string) => R {
  const seen = new WeakMap<object, { key: string; result: R }>();
  return (value, key) => {
    if (typeof value !== "object" || value === null) return parse(value, key);
    const hit = seen.get(value);
    if (hit && hit.key === key) return hit.result;
    const result = parse(value, key);
    seen.set(value, { key, result });
    return result;
  };
}
