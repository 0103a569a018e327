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

/** `POST /api/webhooks`'s body (docs/api.md#webhooks): where to send, and which feed. */
export const NewWebhook = z.strictObject({
  url: z
    .string()
    .max(2048)
    .describe("Where each change is POSTed: https:// on port 443 at a domain name whose addresses are public.")
    .meta({
      examples: ["https://hooks.example.com/ident"],
    }),
  topic: z
    .string()
    .max(2048)
    .describe(
      "The feed to follow: /changes.xml, /entity/{domain}/feed.xml or /issuer/{domain}/feed.xml of this resolver, absolute or as a path.",
    )
    .meta({ examples: ["/entity/alice.example/feed.xml"] }),
});

/** A webhook as its owner reads it. */
export const Webhook = z.object({
  id: z.string().describe("The webhook's id: its address is /api/webhooks/{id}."),
  url: z.string(),
  topic: z.string().describe("The feed's absolute URL."),
  state: z.enum(["active", "ended"]),
  ended_reason: z.string().nullable().describe("Why it ended, in words: deleted by its owner, 410 Gone, or a week of failed deliveries."),
  created_at: z.string(),
  failing_since: z.string().nullable().describe("Since when every delivery has failed; null while they arrive."),
});

/** The answer to `POST /api/webhooks`: the webhook and its secret, shown this once. */
export const WebhookCreated = Webhook.extend({
  secret: z
    .string()
    .describe(
      "whsec_…: verifies each delivery's webhook-signature (Standard Webhooks), and is the Bearer token that reads, tests and deletes it.",
    ),
});

/** One delivery as its webhook's owner sees it. */
export const DeliveryRecord = z.object({
  id: z.string().describe("The webhook-id header it is sent with, the same on every retry."),
  position: z.string().nullable().describe("The change's position (its cursor is p + position); null for a test."),
  created_at: z.string(),
  outcome: z.enum(["delivered", "gave_up"]).nullable().describe("null while it is still tried."),
  attempts: z.number().int(),
  tried_at: z.string().nullable(),
  status: z.number().int().nullable().describe("The callback's HTTP status at the last try."),
  error: z.string().nullable().describe("Why the last try failed, in words."),
});

/** `GET /api/webhooks/{id}`: the webhook and its latest deliveries. */
export const WebhookWithDeliveries = Webhook.extend({ deliveries: z.array(DeliveryRecord).describe("The latest 20, newest first.") });

/** `POST /api/webhooks/{id}/test`: the test delivery queued. */
export const TestQueued = z.object({ delivery: z.string() });

export const WebhookPath = z.object({ id: z.string().describe("The webhook's id, as its creation answered.") });
