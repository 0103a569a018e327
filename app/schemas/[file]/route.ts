import { documentSchema, isSchemaKind } from "ident-resolver";
import { app } from "@/web/app";

/** `/schemas/{entity,property,credential}.json`: the documents' JSON Schemas (docs/publishing.md#schemas). */
export async function GET(_request: Request, { params }: { params: Promise<{ file: string }> }) {
  const { file } = await params;
  const kind = file.endsWith(".json") ? file.slice(0, -".json".length) : "";
  if (!isSchemaKind(kind)) {
    return Response.json(
      {
        error: { code: "not_found", message: "The schemas are /schemas/entity.json, /schemas/property.json and /schemas/credential.json." },
      },
      { status: 404, headers: { "Cache-Control": "no-store" } },
    );
  }
  return new Response(`${JSON.stringify(documentSchema(kind, app().config.publicUrl), null, 2)}\n`, {
    headers: {
      "Content-Type": "application/schema+json; charset=utf-8",
      "Cache-Control": "public, max-age=3600",
      // Editors fetch schemas from anywhere.
      "Access-Control-Allow-Origin": "*",
    },
  });
}
