import { describe, expect, it } from "vitest";
import { parseCredentialDocument } from "./credential";
import { parseEntityDocument } from "./entity";
import { jsonDepth, MAX_JSON_DEPTH, parseJson } from "./json";
import { parsePropertyDocument } from "./property";

const E = "§:entity:alice.example";

describe("V1: entity document acceptance", () => {
  it.each([
    ["not an object (array)", [], "not_an_object"],
    ["not an object (string)", "§:entity:alice.example", "not_an_object"],
    ["null", null, "not_an_object"],
    ["Errors row: lacks network_id", { entity_type: "person" }, "missing_network_id"],
    ["Errors row: network_id is empty", { network_id: "" }, "missing_network_id"],
    ["Errors row: network_id shape (no prefix)", { network_id: "alice.example" }, "invalid_network_id"],
    ["Errors row: network_id shape (wrong kind)", { network_id: "§:property:alice.example" }, "invalid_network_id"],
    ["Errors row: network_id shape (not a string)", { network_id: 42 }, "invalid_network_id"],
    [
      "docs/decisions.md#validation [bind]: network_id of another domain",
      { network_id: "§:entity:bob.example" },
      "network_id_domain_mismatch",
    ],
    [
      "docs/decisions.md#validation [bind]: a subdomain is another domain",
      { network_id: "§:entity:evil.alice.example" },
      "network_id_domain_mismatch",
    ],
  ])("%s → rejected (%s)", (_name, doc, code) => {
    const parsed = parseEntityDocument(doc, "alice.example");
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.code).toBe(code);
    expect(parsed.problems[0]).toMatchObject({ code, severity: "error" });
  });
  it("names the claimed domain in a network_id_domain_mismatch message", () => {
    const parsed = parseEntityDocument({ network_id: "§:entity:bob.example" }, "alice.example");
    expect(parsed.problems[0]?.message).toContain("bob.example");
  });
  it("Errors row: entity document is not valid JSON", () => {
    expect(parseJson("{ nope").ok).toBe(false);
    expect(parseJson('{"network_id": 1}').ok).toBe(true);
  });
  it("minimum legal document: only network_id", () => {
    const parsed = parseEntityDocument({ network_id: E }, "alice.example");
    expect(parsed).toMatchObject({
      ok: true,
      problems: [],
      entity: { network_id: E, details: {}, properties: [], credentials: [], connections: [] },
    });
  });
  it("V6: accepts a network_id in other casing and keeps it", () => {
    const parsed = parseEntityDocument({ network_id: "§:entity:ALICE.Example" }, "alice.example");
    expect(parsed.ok && parsed.entity.network_id).toBe("§:entity:ALICE.Example");
  });
  it("is lenient on optional fields: drops wrong types with a warning at their path", () => {
    const parsed = parseEntityDocument(
      { network_id: E, entity_type: "robot", version: 0.9, details: { name: 7, location: "Lyon", extra: "x" }, properties: "nope" },
      "alice.example",
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.entity.details).toEqual({ location: "Lyon" });
    expect(parsed.entity.entity_type).toBe("robot");
    expect(parsed.problems.map((p) => [p.code, p.path])).toEqual([
      ["invalid_field", "version"],
      ["unknown_entity_type", "entity_type"],
      ["invalid_field", "details.name"],
      ["invalid_field", "properties"],
    ]);
    expect(parsed.problems.every((p) => p.severity === "warning")).toBe(true);
  });
});

describe("V2: entries are validated independently", () => {
  const doc = {
    network_id: E,
    properties: [
      { id: "§:property:blog.example", name: "Blog", url: "javascript:alert(1)" },
      { id: "blog.example" },
      "not an object",
      { id: "§:property:BLOG.example", name: "again" },
      { id: "§:property:shop.example", name: 5, ownership: "x" },
    ],
    credentials: [{ id: "@alice@guild.example/members", title: "Member" }, { title: "no id" }, { id: "@alice@guild.example/MEMBERS" }],
    other_connections: [{ id: "https://social.example/@alice" }, { id: "" }, {}],
  };
  const parsed = parseEntityDocument(doc, "alice.example");
  if (!parsed.ok) throw new Error("expected accepted");
  const entity = parsed.entity;

  it("Errors row: a malformed property entry fails alone; the rest stays valid", () => {
    expect(entity.properties.map((e) => (e.ok ? "ok" : e.reason))).toEqual(["ok", "invalid_entry", "invalid_entry", "duplicate", "ok"]);
    expect(entity.properties[1]).toMatchObject({ id: "blog.example", raw: { id: "blog.example" } });
  });
  it("Errors row: a malformed credential entry fails alone", () => {
    expect(entity.credentials.map((e) => (e.ok ? "ok" : e.reason))).toEqual(["ok", "invalid_entry", "duplicate"]);
  });
  it("V6: a credential id differing only in case repeats the earlier one", () => {
    expect(entity.credentials[2]?.problems[0]).toMatchObject({ code: "duplicate", path: "credentials[2]" });
  });
  it("reports a repeated id as duplicate, case-insensitively (V6)", () => {
    expect(entity.properties[3]?.problems[0]?.code).toBe("duplicate");
  });
  it("keeps unsafe URLs as text with a warning", () => {
    expect(entity.properties[0]?.problems).toEqual([expect.objectContaining({ code: "unsafe_url", path: "properties[0].url" })]);
  });
  it("drops wrong-typed optional fields of an entry with warnings", () => {
    const shop = entity.properties[4];
    expect(shop?.ok && shop.value).toEqual({ id: "§:property:shop.example" });
    expect(shop?.problems.map((p) => p.path)).toEqual(["properties[4].name", "properties[4].ownership"]);
  });
  it("connections need an id", () => {
    expect(entity.connections.map((e) => (e.ok ? "ok" : e.reason))).toEqual(["ok", "invalid_entry", "invalid_entry"]);
  });
});

describe("property document (docs/protocol.md#property)", () => {
  it.each([
    ["no ident_property", { id: "§:property:blog.example" }],
    ["ident_property not an object", { ident_property: [] }],
    ["no id", { ident_property: { ownership: [] } }],
    ["bad id", { ident_property: { id: "blog.example", ownership: [] } }],
    ["no ownership", { ident_property: { id: "§:property:blog.example" } }],
    ["ownership not an array", { ident_property: { id: "§:property:blog.example", ownership: {} } }],
  ])("invalid: %s", (_name, doc) => {
    const parsed = parsePropertyDocument(doc);
    expect(parsed.ok).toBe(false);
    expect(parsed.problems.some((p) => p.code === "invalid_document")).toBe(true);
  });
  it("minimum viable: id and ownership; bad owners are skipped with a warning", () => {
    const parsed = parsePropertyDocument({
      ident_property: { id: "§:property:blog.example", ownership: [{ network_id: E }, "x", { network_id: 1 }] },
    });
    expect(parsed.ok && parsed.doc.ident_property.ownership).toEqual([E]);
    expect(parsed.problems).toHaveLength(2);
  });
});

describe("V5: credential document minimum", () => {
  it("verifies with only ident_entity_id and a title", () => {
    const parsed = parseCredentialDocument({ ident_entity_id: E, ident_credential: { title: "Member" } });
    expect(parsed).toEqual({ ok: true, problems: [], doc: { ident_entity_id: E, ident_credential: { title: "Member" } } });
  });
  it.each([
    ["no ident_entity_id", { ident_credential: { title: "x" } }],
    ["empty ident_entity_id", { ident_entity_id: "", ident_credential: { title: "x" } }],
    ["no ident_credential", { ident_entity_id: E }],
    ["no title", { ident_entity_id: E, ident_credential: { type: "Member" } }],
    ["blank title", { ident_entity_id: E, ident_credential: { title: "  " } }],
    ["not an object", [E]],
  ])("invalid: %s", (_name, doc) => {
    expect(parseCredentialDocument(doc).ok).toBe(false);
  });
  it("a malformed nested issuer property only warns", () => {
    const parsed = parseCredentialDocument({
      ident_entity_id: E,
      ident_credential: { title: "x", property: { name: "no id" }, profile_url: "data:x" },
    });
    expect(parsed.ok).toBe(true);
    expect(parsed.problems.map((p) => [p.code, p.severity])).toEqual([
      ["unsafe_url", "warning"],
      ["invalid_field", "warning"],
    ]);
  });
});

describe("parseJson: nesting depth", () => {
  it.each([
    ["{}", 1],
    ['{"a":[1,{"b":[]}]}', 4],
    ['"[[[[["', 0],
    ['["\\"", "[[[["]', 1],
    ["1", 0],
  ])("jsonDepth(%s) = %d", (text, depth) => {
    expect(jsonDepth(text)).toBe(depth);
  });
  it("refuses a document nested deeper than the limit, which JSON.stringify could not print", () => {
    const deep = `{"network_id":"§:entity:a.example","details":{"name":${"[".repeat(500_000)}${"]".repeat(500_000)}}}`;
    expect(() => JSON.stringify(JSON.parse(deep))).toThrow(RangeError);
    expect(parseJson(deep)).toEqual({ ok: false, message: `nested deeper than ${MAX_JSON_DEPTH} levels` });
    expect(parseJson(`${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}`).ok).toBe(true);
  });
});
