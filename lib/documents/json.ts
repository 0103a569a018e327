/** Reading untrusted JSON text (docs/decisions.md#validation). */

/** A plain JSON object: not null, not an array. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export type JsonParse = { ok: true; value: unknown } | { ok: false; message: string };

/** Deepest nesting accepted. Real documents are about 5 deep; JSON.stringify overflows near 5,000. */
export const MAX_JSON_DEPTH = 64;

/** The deepest array/object nesting of a JSON text, in one pass without recursion. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/**
 * Parses an untrusted JSON text. A text nested deeper than {@link MAX_JSON_DEPTH} is refused: it
 * would parse, but every later JSON.stringify of the result (API, CLI) would overflow the stack.
 */
export function parseJson(text: string): JsonParse {
  if (jsonDepth(text) > MAX_JSON_DEPTH) return { ok: false, message: `nested deeper than ${MAX_JSON_DEPTH} levels` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : "not JSON" };
  }
}
