/**
 * The API's parameters and answers as zod schemas (docs/api.md): the handlers (web/api.ts) check
 * parameters with them, the answers' types are inferred from them, and the OpenAPI description
 * (web/openapi.ts) is generated from them, so the three cannot drift apart.
 */
import { z } from "zod";
import { MAX_QUERY_LENGTH } from "ident-resolver";
import { ErrorBody, SearchResponse } from "ident-resolver";
import { IndexSearch, MAX_SEARCH_LENGTH } from "ident-resolver/store";
import { ChangeCursorText, Changes, CHANGES_DEFAULT, CHANGES_MAX } from "ident-resolver/store";
import { History } from "ident-resolver/store";
import { RefusalBody } from "ident-resolver/traffic";

export { Changes, ErrorBody, History, IndexSearch, RefusalBody, SearchResponse };

/**
 * Parameters: the limits of the text are stated for readers here and checked, with their words, by
 * `parseQuery` and `parseSearchText`, from the same constants.
 */
export const ResolveParams = z.object({
  q: z.string().meta({
    minLength: 1,
    maxLength: MAX_QUERY_LENGTH,
    description: "A domain, an https:// URL, a network_id, a property_id or a credential_id; surrounding space is trimmed.",
    examples: ["alice.example", "@alice@guild.example/members"],
  }),
  refresh: z.enum(["1"]).optional().meta({
    description: "1 to fetch every document again now instead of answering from the cache (its own per-client limit).",
  }),
});

export const SearchParams = z.object({
  q: z.string().meta({
    minLength: 1,
    maxLength: MAX_SEARCH_LENGTH,
    description: "Words of a name, a domain or a network_id; prefixes match, case and accents are ignored, a small typo is forgiven.",
    examples: ["makers guild"],
  }),
  cursor: z.string().max(200).optional().meta({ description: "The `next_cursor` of the page before." }),
});

export const HistoryParams = z.object({
  domain: z
    .string()
    .max(253)
    .meta({ description: "The entity's domain.", examples: ["alice.example"] }),
});

export const ChangesParams = z.object({
  after: ChangeCursorText.optional().meta({
    description:
      "The `cursor` of a change (or a page's `next_cursor`): the page starts just after it, in the order the changes were recorded. " +
      "Without it, at the first change recorded. Opaque and short; one the server did not hand out is 400.",
    examples: ["p1234"],
  }),
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,2}$/, `a number from 1 to ${CHANGES_MAX}`)
    .refine((n) => Number(n) <= CHANGES_MAX, `at most ${CHANGES_MAX}`)
    .optional()
    .meta({ description: `How many changes a page holds at most (default ${CHANGES_DEFAULT}, at most ${CHANGES_MAX}).`, examples: ["50"] }),
});

/** The description of the API itself: an OpenAPI document, read as any JSON object. */
export const Description = z.record(z.string(), z.unknown());

/**
 * Checks `params` against `schema`: the values, or the words of a 400. A missing `q` is the empty
 * text, which the query's own parser refuses in its words.
 */
export function checkParams<S extends z.ZodType>(
  schema: S,
  values: Record<string, string>,
): { ok: true; value: z.infer<S> } | { ok: false; message: string } {
  const parsed = schema.safeParse(values);
  if (parsed.success) return { ok: true, value: parsed.data };
  const first = parsed.error.issues[0];
  return { ok: false, message: `The parameter ${first?.path.join(".") ?? ""} is not valid: ${first?.message ?? "unexpected value"}.` };
}
