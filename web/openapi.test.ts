/**
 * `/api/openapi.json` (docs/api.md), read by two real OpenAPI parsers (@apidevtools/swagger-parser,
 * which validates 3.1 documents against the specification's own schema, and @readme/openapi-parser,
 * which also checks each operation's path parameters), and complete: every route the API answers is
 * in it, with every status it gives.
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import { compileErrors, validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "./openapi";

describe("the OpenAPI description", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const doc = structuredClone(openApiDocument());
    const api = await SwaggerParser.validate(doc as never);
    expect(api).toMatchObject({ openapi: "3.1.0" });
  });
  it("is valid for @readme/openapi-parser too, with no warning", async () => {
    const result = await validate(structuredClone(openApiDocument()) as Parameters<typeof validate>[0]);
    expect(result.valid ? "" : compileErrors(result)).toBe("");
    expect(result.warnings).toEqual([]);
  });
  it("that parser is strict: an operation of a templated path without its path parameter is refused", async () => {
    const doc = structuredClone(openApiDocument()) as { paths: Record<string, { parameters?: unknown; get: { parameters?: unknown } }> };
    const history = doc.paths["/api/entity/{domain}/history"]!;
    delete history.parameters;
    delete history.get.parameters;
    const result = await validate(doc as Parameters<typeof validate>[0]);
    expect(result.valid).toBe(false);
    expect(compileErrors(result)).toContain("domain");
  });
  it("the parser is strict: an answer without its description is refused", async () => {
    const doc = structuredClone(openApiDocument()) as { paths: Record<string, { get: { responses: Record<string, object> } }> };
    doc.paths["/api/search"]!.get.responses["200"] = { content: {} };
    await expect(SwaggerParser.validate(doc as never)).rejects.toThrow();
  });
  it("describes every route with its parameters and answers", async () => {
    const doc = (await SwaggerParser.dereference(structuredClone(openApiDocument()) as never)) as unknown as {
      paths: Record<
        string,
        {
          parameters?: { name: string; in: string; required: boolean }[];
          get: { parameters?: { name: string; in: string; required: boolean }[]; responses: Record<string, unknown> };
        }
      >;
    };
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/api/changes",
      "/api/entity/{domain}/history",
      "/api/openapi.json",
      "/api/resolve",
      "/api/search",
      "/api/webhooks",
      "/api/webhooks/{id}",
      "/api/webhooks/{id}/test",
    ]);
    for (const p of ["/api/resolve", "/api/search", "/api/entity/{domain}/history", "/api/changes"]) {
      expect(Object.keys(doc.paths[p]!.get.responses)).toEqual(expect.arrayContaining(["200", "304", "400", "429", "503"]));
    }
    expect(doc.paths["/api/resolve"]!.get.parameters).toEqual([
      expect.objectContaining({ name: "q", in: "query", required: true, schema: expect.objectContaining({ maxLength: 512 }) }),
      expect.objectContaining({ name: "refresh", in: "query", required: false }),
    ]);
    expect(doc.paths["/api/search"]!.get.parameters?.map((p) => p.name)).toEqual(["q", "cursor"]);
    // The path's own parameter, shared by its GET and its preflight.
    expect(doc.paths["/api/entity/{domain}/history"]!.parameters).toEqual([
      expect.objectContaining({ name: "domain", in: "path", required: true }),
    ]);
  });
});
