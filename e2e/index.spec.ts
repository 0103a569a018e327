/** The index through the API (docs/decisions.md#the-index): `since` on every claim, and the history of changes. */
import { expect, test } from "@playwright/test";
import { SearchResponse } from "../lib/result/record";

test("a lookup is recorded: the API carries last_checked_at and each claim's since; the history lists the first verdicts", async ({
  request,
}) => {
  const r = SearchResponse.parse(await (await request.get("/api/resolve?q=acme.example")).json()).results[0]!;
  const checked = r.entity.last_checked_at!;
  expect(checked).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  for (const claim of [...r.properties, ...r.credentials, ...r.connections]) {
    expect(claim.since?.first_seen_at).toBeDefined();
    expect(claim.since?.last_checked_at).toBe(checked);
    expect(claim.verified ? claim.since?.verified_since : claim.since?.failing_since).toBeDefined();
  }
  // Asked again, the answer comes from the cache (the admission's), annotated all the same: the same
  // runs, checked then or later (documents here go stale after 3 s and are refreshed).
  const again = SearchResponse.parse(await (await request.get("/api/resolve?q=acme.example")).json()).results[0]!;
  expect(again.entity.last_checked_at! >= checked).toBe(true);
  expect(again.properties.map((c) => c.since?.first_seen_at)).toEqual(r.properties.map((c) => c.since?.first_seen_at));
  const history = await request.get("/api/entity/acme.example/history");
  expect(history.status()).toBe(200);
  expect(history.headers()["cache-control"]).toBe("no-store");
  const body = (await history.json()) as { schema: string; domain: string; changes: { kind: string; status?: string }[] };
  expect(body.schema).toBe("ident-resolver/history@1");
  expect(body.domain).toBe("acme.example");
  expect(body.changes.at(-1)).toMatchObject({ kind: "entity", status: "accepted" });
  expect(body.changes.length).toBe(1 + r.properties.length + r.credentials.length + r.connections.length);
});

test("the history of a domain the index has not seen is 404, of a non-domain 400, both in JSON", async ({ request }) => {
  const unknown = await request.get("/api/entity/never-looked-up.example/history");
  expect(unknown.status()).toBe(404);
  expect(await unknown.json()).toMatchObject({ error: { code: "not_found" } });
  const bad = await request.get("/api/entity/%FF/history");
  expect(bad.status()).toBe(400);
  expect(await bad.json()).toMatchObject({ error: { code: "invalid_query" } });
});
