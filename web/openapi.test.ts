/**
 * `/api/openapi.json` (docs/api.md), read by a real OpenAPI parser (@apidevtools/swagger-parser,
 * which validates 3.1 documents against the specification's own schema), and complete: every route
 * the API answers is in it, with every status it gives.
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "./openapi";

describe("the OpenAPI description", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const doc = structuredClone(openApiDocument());
    const api = await SwaggerParser.validate(doc as never);
    expect(api).toMatchObject({ openapi: "3.1.0" });
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
        { get: { parameters?: { name: string; in: string; required: boolean }[]; responses: Record<string, unknown> } }
      >;
    };
    expect(Object.keys(doc.paths).sort()).toEqual(["/api/entity/{domain}/history", "/api/openapi.json", "/api/resolve", "/api/search"]);
    for (const p of ["/api/resolve", "/api/search", "/api/entity/{domain}/history"]) {
      expect(Object.keys(doc.paths[p]!.get.responses)).toEqual(expect.arrayContaining(["200", "304", "400", "429", "503"]));
    }
    expect(doc.paths["/api/resolve"]!.get.parameters).toEqual([
      expect.objectContaining({ name: "q", in: "query", required: true, schema: expect.objectContaining({ maxLength: 512 }) }),
      expect.objectContaining({ name: "refresh", in: "query", required: false }),
    ]);
    expect(doc.paths["/api/search"]!.get.parameters?.map((p) => p.name)).toEqual(["q", "cursor"]);
    expect(doc.paths["/api/entity/{domain}/history"]!.get.parameters).toEqual([
      expect.objectContaining({ name: "domain", in: "path", required: true }),
    ]);
  });
});
