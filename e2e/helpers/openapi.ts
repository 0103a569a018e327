/**
 * Every API answer the browser tests receive is checked against the server's own OpenAPI document
 * (docs/api.md): its status must be one the document gives for the route, its body must match that
 * answer's schema (Ajv, JSON Schema 2020-12, the dialect of OpenAPI 3.1), and the headers it declares
 * must be there. A request to `/api/` that is not one of its routes or methods is not an API answer.
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import type { APIResponse } from "@playwright/test";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

type Answer = { headers?: Record<string, unknown>; content?: { "application/json"?: { schema: object } } };
type Doc = { paths: Record<string, Record<string, { responses: Record<string, Answer> }>> };

const docs = new Map<string, Promise<Doc>>();
const compiled = new WeakMap<object, ValidateFunction>();
const ajv = new Ajv2020({ strict: false, allErrors: true });

/** The document of `origin`, fetched once and dereferenced. */
function docOf(origin: string): Promise<Doc> {
  let doc = docs.get(origin);
  if (!doc) {
    doc = fetch(`${origin}/api/openapi.json`)
      .then((r) => r.json())
      .then((d: unknown) => SwaggerParser.dereference(d as never) as unknown as Promise<Doc>);
    docs.set(origin, doc);
  }
  return doc;
}

/** The document's path template `path` matches (`{domain}` is one segment). */
function templateOf(doc: Doc, path: string): string | null {
  for (const template of Object.keys(doc.paths)) {
    const re = new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+")}$`);
    if (re.test(path)) return template;
  }
  return null;
}

/** Throws, saying why, when `response` (to an `/api/` route) does not match the document. */
export async function checkAgainstOpenApi(response: APIResponse, method = "GET"): Promise<void> {
  const url = new URL(response.url());
  if (!url.pathname.startsWith("/api/")) return;
  const doc = await docOf(url.origin);
  const template = templateOf(doc, url.pathname);
  if (template === null) return;
  const operation = doc.paths[template]?.[method === "HEAD" ? "get" : method.toLowerCase()];
  const status = String(response.status());
  const where = `${method} ${url.pathname}${url.search} → ${status}`;
  // A method the document does not give the route is not one of the API's operations (405, docs/api.md).
  if (!operation) return;
  const answer = operation.responses[status];
  if (!answer) throw new Error(`${where}: the OpenAPI document gives ${template} no ${status} answer`);
  const headers = response.headers();
  for (const name of Object.keys(answer.headers ?? {})) {
    if (headers[name.toLowerCase()] === undefined) throw new Error(`${where}: the header ${name} is missing`);
  }
  const schema = answer.content?.["application/json"]?.schema;
  if (!schema || method === "HEAD" || status === "304") return;
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  const body: unknown = await response.json();
  if (!validate(body)) throw new Error(`${where}: the body does not match its schema: ${ajv.errorsText(validate.errors)}`);
}
