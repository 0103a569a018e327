/**
 * `GET /api/openapi.json` (docs/api.md): an OpenAPI 3.1 description of every `/api/` route, generated
 * from the zod schemas the handlers check their parameters with and infer their answers from
 * (web/api-schemas.ts), so that it cannot drift from what they do.
 */
import { z } from "zod";
import { VERSION } from "ident-resolver";
import {
  Changes,
  ChangesParams,
  Description,
  ErrorBody,
  History,
  HistoryParams,
  IndexSearch,
  RefusalBody,
  ResolveParams,
  SearchParams,
  SearchResponse,
  NewWebhook,
  TestQueued,
  WebhookCreated,
  WebhookPath,
  WebhookWithDeliveries,
} from "./api-schemas";
import { ChangeItem } from "ident-resolver/store";

type Json = Record<string, unknown>;

/** A zod schema as JSON Schema 2020-12, the dialect of OpenAPI 3.1, without its `$schema`. */
function jsonSchema(schema: z.ZodType): Json {
  const out: Json = z.toJSONSchema(schema, { target: "draft-2020-12", unrepresentable: "any" });
  delete out.$schema;
  return out;
}

/** The parameters of an object schema, each `in` the query or the path. */
function parameters(schema: z.ZodObject, where: "query" | "path"): Json[] {
  const whole = jsonSchema(schema) as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(whole.properties ?? {}).map(([name, property]) => {
    const { description, examples, ...rest } = property as Json & { description?: string; examples?: unknown[] };
    return Object.assign(
      { name, in: where, required: where === "path" || (whole.required ?? []).includes(name), schema: rest },
      description === undefined ? {} : { description },
      examples?.[0] === undefined ? {} : { example: examples[0] },
    );
  });
}

const ref = (kind: "schemas" | "responses" | "headers", name: string) => ({ $ref: `#/components/${kind}/${name}` });
const json = (schema: Json) => ({ "application/json": { schema } });

/**
 * Headers on every answer, and on those of each kind. An answer a shared cache may keep has no
 * `RateLimit`: that is one client's own (docs/api.md#limits).
 */
const POLICY_HEADERS = {
  "RateLimit-Policy": ref("headers", "RateLimit-Policy"),
  "Access-Control-Allow-Origin": ref("headers", "Access-Control-Allow-Origin"),
};
const LIMIT_HEADERS = Object.assign({ RateLimit: ref("headers", "RateLimit") }, POLICY_HEADERS);
const CACHED_HEADERS = Object.assign({}, POLICY_HEADERS, {
  ETag: ref("headers", "ETag"),
  "Cache-Control": ref("headers", "Cache-Control"),
});
const REFUSED_HEADERS = Object.assign({}, LIMIT_HEADERS, { "Retry-After": ref("headers", "Retry-After") });

const ok = (description: string, schema: string) => ({ description, headers: CACHED_HEADERS, content: json(ref("schemas", schema)) });

/** The answers shared by the routes. */
const COMMON = {
  "304": ref("responses", "NotModified"),
  "400": ref("responses", "BadRequest"),
  "429": ref("responses", "TooManyRequests"),
  "503": ref("responses", "Unavailable"),
};
/** Every route answers a preflight. */
const PREFLIGHT = {
  summary: "CORS preflight",
  responses: { "204": { description: "Any origin may call the API with GET or HEAD, without credentials." } },
};

/** The webhooks' routes take POST and DELETE, and the Authorization header. */
const WEBHOOK_PREFLIGHT = {
  summary: "CORS preflight",
  responses: {
    "204": { description: "Any origin may call these routes with their methods, Content-Type and Authorization, without credentials." },
  },
};
const NO_SUCH_WEBHOOK = {
  description: "No webhook has this id and secret: one answer for both, so nobody learns which ids exist.",
  headers: LIMIT_HEADERS,
  content: json(ref("schemas", "ErrorBody")),
};

/** A route's GET (and its preflight): its id, summary, query parameters and answers. */
const route = (operationId: string, summary: string, responses: Json, parameters?: Json[]) => ({
  get: Object.assign({ operationId, summary }, parameters ? { parameters } : {}, { responses }),
  options: PREFLIGHT,
});

/** The API's routes (docs/api.md). */
function paths(): Json {
  return {
    "/api/resolve": route(
      "resolve",
      "Look up an entity, a property or a credential, verifying every claim",
      Object.assign({ "200": ok("The lookup's results.", "SearchResponse") }, COMMON),
      parameters(ResolveParams, "query"),
    ),
    "/api/search": route(
      "search",
      "Search the index of entities this resolver has recorded; never fetches",
      Object.assign({ "200": ok("One page of hits, ranked.", "IndexSearch") }, COMMON),
      parameters(SearchParams, "query"),
    ),
    "/api/changes": route(
      "changes",
      "Every recorded change of verdict, oldest first after a cursor; never fetches",
      Object.assign({ "200": ok("A page of changes, oldest first.", "Changes") }, COMMON),
      parameters(ChangesParams, "query"),
    ),
    // Its parameter declared for the path, so that each of its operations (the preflight too) has it.
    "/api/entity/{domain}/history": Object.assign(
      { parameters: parameters(HistoryParams, "path") },
      route(
        "history",
        "The changes of verdict recorded for one entity, newest first; never fetches",
        Object.assign({ "200": ok("The entity's recorded changes.", "History") }, COMMON, {
          "404": {
            description: "The index has no record of this domain.",
            headers: LIMIT_HEADERS,
            content: json(ref("schemas", "ErrorBody")),
          },
        }),
      ),
    ),
    ...webhookPaths(),
    "/api/openapi.json": route("description", "This description", {
      "200": ok("This OpenAPI document.", "Description"),
      "304": ref("responses", "NotModified"),
    }),
  };
}

/** The webhooks' routes (docs/api.md#webhooks): made, read, tested and deleted with their secret. */
function webhookPaths(): Json {
  return {
    "/api/webhooks": {
      post: {
        operationId: "createWebhook",
        summary: "Follow a feed with a webhook: each change of verdict is POSTed to your URL (Standard Webhooks)",
        requestBody: { required: true, content: json(jsonSchema(NewWebhook)) },
        responses: Object.assign(
          {
            "201": {
              description: "The webhook, with its secret (shown this once). Location names it.",
              headers: Object.assign({ Location: { schema: { type: "string" } } }, LIMIT_HEADERS),
              content: json(ref("schemas", "WebhookCreated")),
            },
            "415": { description: "The body is not JSON.", headers: LIMIT_HEADERS, content: json(ref("schemas", "ErrorBody")) },
          },
          { "400": COMMON["400"], "429": COMMON["429"], "503": COMMON["503"] },
        ),
      },
      options: WEBHOOK_PREFLIGHT,
    },
    "/api/webhooks/{id}": {
      parameters: parameters(WebhookPath, "path"),
      get: {
        operationId: "readWebhook",
        summary: "Read a webhook and its latest deliveries (time, status, error in words)",
        security: [{ webhookSecret: [] }],
        responses: {
          "200": { description: "The webhook.", headers: LIMIT_HEADERS, content: json(ref("schemas", "WebhookWithDeliveries")) },
          "404": NO_SUCH_WEBHOOK,
          "429": COMMON["429"],
        },
      },
      delete: {
        operationId: "deleteWebhook",
        summary: "End a webhook: nothing more is sent to it",
        security: [{ webhookSecret: [] }],
        responses: { "204": { description: "Ended.", headers: LIMIT_HEADERS }, "404": NO_SUCH_WEBHOOK, "429": COMMON["429"] },
      },
      options: WEBHOOK_PREFLIGHT,
    },
    "/api/webhooks/{id}/test": {
      parameters: parameters(WebhookPath, "path"),
      post: {
        operationId: "testWebhook",
        summary: "Send a test delivery, signed as every delivery is",
        security: [{ webhookSecret: [] }],
        responses: {
          "202": {
            description: "Queued; its outcome is listed with the deliveries.",
            headers: LIMIT_HEADERS,
            content: json(ref("schemas", "TestQueued")),
          },
          "404": NO_SUCH_WEBHOOK,
          "409": { description: "The webhook has ended.", headers: LIMIT_HEADERS, content: json(ref("schemas", "ErrorBody")) },
          "429": COMMON["429"],
        },
      },
      options: WEBHOOK_PREFLIGHT,
    },
  };
}

/** The answers shared by the routes, in words. */
function responses(): Json {
  return {
    NotModified: { description: "The answer is the one whose ETag was sent in If-None-Match.", headers: CACHED_HEADERS },
    BadRequest: { description: "A parameter is not valid.", headers: LIMIT_HEADERS, content: json(ref("schemas", "ErrorBody")) },
    TooManyRequests: {
      description: "The client has had one of its limits for now; Retry-After says when to ask again.",
      headers: REFUSED_HEADERS,
      content: json(ref("schemas", "RefusalBody")),
    },
    Unavailable: {
      description: "This resolver is busy, or its index cannot be read just now.",
      headers: REFUSED_HEADERS,
      content: json({ oneOf: [ref("schemas", "RefusalBody"), ref("schemas", "ErrorBody")] }),
    },
  };
}

/** The headers the answers carry, in words. */
const HEADERS = {
  ETag: { description: "A strong validator of the body, the same on every instance.", schema: { type: "string" } },
  "Cache-Control": { description: "How long the answer is fresh.", schema: { type: "string" } },
  RateLimit: {
    description:
      'What the client has left of each policy: `"cold";r=12;t=40, "search";r=118;t=3, "reads";r=590;t=3` (draft-ietf-httpapi-ratelimit-headers-11). ' +
      "Only on answers no shared cache keeps (errors and refusals): a cached answer would hand one client's counters to others.",
    schema: { type: "string" },
  },
  "RateLimit-Policy": {
    description:
      'The client\'s policies: `"cold";q=30;w=60` (lookups that fetch from publishers), `"search";q=120;w=60` (searches of the index), `"reads";q=600;w=60` (every read of the index that is not a lookup).',
    schema: { type: "string" },
  },
  "Retry-After": { description: "Seconds until the request may succeed.", schema: { type: "integer", minimum: 1 } },
  "Access-Control-Allow-Origin": { description: "Any origin may read the answer.", schema: { type: "string", const: "*" } },
};

let made: Json | null = null;

/** The document, made once. */
export function openApiDocument(): Json {
  made ??= {
    openapi: "3.1.0",
    info: {
      title: "ident resolver API",
      version: VERSION,
      description:
        "Resolves decentralised identity documents and verifies every claim both ways; searches what this resolver has recorded. " +
        "Guide: docs/api.md in the project. Every answer carries CORS and the rate-limit policy; one no shared cache keeps also " +
        "what the client has left of it (RateLimit). A 200 carries an ETag.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    paths: paths(),
    webhooks: {
      change: {
        post: {
          operationId: "change",
          summary:
            "Each change of verdict of the feed a webhook follows, as /api/changes gives it, signed in the Standard Webhooks form " +
            "(webhook-id, the same on every retry; webhook-timestamp; webhook-signature v1 under the webhook's secret). " +
            "Answer 2xx; anything else is retried with growing waits for a day; 410 ends the webhook.",
          requestBody: { required: true, content: json(ref("schemas", "ChangeItem")) },
          responses: { "204": { description: "Taken." } },
        },
      },
    },
    components: {
      schemas: {
        SearchResponse: jsonSchema(SearchResponse),
        IndexSearch: jsonSchema(IndexSearch),
        History: jsonSchema(History),
        Changes: jsonSchema(Changes),
        ErrorBody: jsonSchema(ErrorBody),
        RefusalBody: jsonSchema(RefusalBody),
        Description: jsonSchema(Description),
        ChangeItem: jsonSchema(ChangeItem),
        WebhookCreated: jsonSchema(WebhookCreated),
        WebhookWithDeliveries: jsonSchema(WebhookWithDeliveries),
        TestQueued: jsonSchema(TestQueued),
      },
      securitySchemes: {
        webhookSecret: { type: "http", scheme: "bearer", description: "The webhook's whsec_… secret, as its creation answered." },
      },
      responses: responses(),
      headers: HEADERS,
    },
  };
  return made;
}
