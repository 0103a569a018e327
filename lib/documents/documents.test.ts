import { describe, expect, it } from "vitest";
import { claimCounts } from "../result/claims.ts";
import { parseCredentialDocument } from "./credential.ts";
import { parseEntityDocument } from "./entity.ts";
import { jsonDepth, MAX_JSON_DEPTH, parseJson } from "./json.ts";
import { parsePropertyDocument } from "./property.ts";

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

describe("every publisher string has a length it is kept at (docs/decisions.md#validation)", () => {
  const long = (n: number, c = "x") => c.repeat(n);
  const url = (bytes: number) => `https://a.example/${long(bytes - 18)}`;

  it.each([
    ["an ASCII id of 1,024 bytes is read", "other_connections", { id: url(1024) }, "ok", null],
    [
      "one of 1,025 bytes is not",
      "other_connections",
      { id: url(1025) },
      "invalid_entry",
      "other_connections[0].id is 1,025 bytes long; an id is read up to 1,024 bytes (UTF-8)",
    ],
    ["400 two-byte letters are 818 bytes: read", "other_connections", { id: `https://a.example/${long(400, "é")}` }, "ok", null],
    [
      "a property id of a megabyte",
      "properties",
      { id: `§:property:${long(1_000_000)}.example` },
      "invalid_entry",
      "properties[0].id is 1,000,020 bytes long; an id is read up to 1,024 bytes (UTF-8)",
    ],
    [
      "a credential id of 2,000 bytes",
      "credentials",
      { id: `@${long(1980)}@guild.example` },
      "invalid_entry",
      "credentials[0].id is 1,995 bytes long; an id is read up to 1,024 bytes (UTF-8)",
    ],
  ])("%s", (_, list, entry, outcome, message) => {
    const parsed = parseEntityDocument({ network_id: E, [list]: [entry] }, "alice.example");
    if (!parsed.ok) throw new Error("expected accepted");
    const read = parsed.entity[list === "other_connections" ? "connections" : (list as "properties" | "credentials")][0]!;
    expect(read.ok ? "ok" : read.reason).toBe(outcome);
    if (message) {
      expect(read.problems).toEqual([{ code: "invalid_entry", severity: "error", message, path: `${list}[0].id` }]);
      // The entry keeps an id an answer can carry: cut to the bytes it may have.
      expect(Buffer.byteLength(read.id ?? "")).toBeLessThanOrEqual(1024);
      expect(read.id).toMatch(/… sha256:[0-9a-f]{16}$/);
    }
  });

  it("two ids too long to read that share their first kilobyte stay two claims, each kept with its own digest", () => {
    const parsed = parseEntityDocument(
      { network_id: E, other_connections: [{ id: url(2000) + "a" }, { id: url(2000) + "b" }] },
      "alice.example",
    );
    if (!parsed.ok) throw new Error("expected accepted");
    const [a, b] = parsed.entity.connections;
    expect([a?.ok, b?.ok]).toEqual([false, false]);
    expect(a?.id).not.toBe(b?.id);
    const claims = parsed.entity.connections.map((e) => ({ id: e.id, verified: false }));
    expect(claimCounts({ properties: [], credentials: [], connections: claims })).toEqual({ verified: 0, total: 2 });
  });

  it("an id of 600 two-byte letters is 1,218 bytes: not read, though it has fewer than 1,024 characters", () => {
    const parsed = parseEntityDocument(
      { network_id: E, other_connections: [{ id: `https://a.example/${long(600, "é")}` }] },
      "alice.example",
    );
    if (!parsed.ok) throw new Error("expected accepted");
    expect(parsed.entity.connections[0]?.problems[0]?.message).toBe(
      "other_connections[0].id is 1,218 bytes long; an id is read up to 1,024 bytes (UTF-8)",
    );
  });

  it("entity_type, details and an entry's fields are cut at a name's or a description's length; a URL too long is not read", () => {
    const parsed = parseEntityDocument(
      {
        network_id: E,
        entity_type: long(1_000_000),
        details: { name: long(301), email: long(10_000), description: long(5001), location: "L\u0007" },
        properties: [{ id: "§:property:blog.example", name: long(400), type: long(400), description: long(6000), url: url(1025) }],
      },
      "alice.example",
    );
    if (!parsed.ok) throw new Error("expected accepted");
    const { entity } = parsed;
    expect([entity.entity_type, entity.details.name, entity.details.email].map((t) => [...(t ?? "")].length)).toEqual([300, 300, 300]);
    expect(entity.details.description).toHaveLength(5000);
    expect(entity.details.description?.endsWith("…")).toBe(true);
    // Cleaned as it is kept (docs/decisions.md#rendering).
    expect(entity.details.location).toBe("L\ufffd");
    expect(parsed.problems.find((p) => p.code === "unknown_entity_type")?.message).toHaveLength(300 + 49);
    const blog = entity.properties[0]!;
    if (!blog.ok) throw new Error("expected ok");
    expect([blog.value.name, blog.value.type].map((t) => t?.length)).toEqual([300, 300]);
    expect(blog.value.description).toHaveLength(5000);
    expect(blog.value.url).toBeUndefined();
    expect(blog.problems).toEqual([
      {
        code: "invalid_field",
        severity: "warning",
        message: "properties[0].url is 1,025 bytes long; a URL is read up to 1,024 bytes, and it was ignored",
        path: "properties[0].url",
      },
    ]);
  });

  it("a counterpart's text is kept alike: a credential's title, its dataset, a profile URL too long", () => {
    const parsed = parseCredentialDocument({
      ident_entity_id: E,
      ident_credential: { title: long(1000), dataset: { id: long(2000), name: long(400) }, profile_url: url(5000) },
    });
    if (!parsed.ok) throw new Error("expected ok");
    const c = parsed.doc.ident_credential;
    expect(c.title).toHaveLength(300);
    expect(c.dataset).toEqual({ name: `${long(299)}…` });
    expect(c.profile_url).toBeUndefined();
    expect(parsed.problems.map((p) => p.path)).toEqual(["ident_credential.profile_url", "ident_credential.dataset.id"]);
  });

  it("a network_id that is not one is quoted to an id's length", () => {
    const parsed = parseEntityDocument({ network_id: long(100_000) }, "alice.example");
    expect(parsed.ok).toBe(false);
    expect(parsed.problems[0]?.message.length).toBeLessThan(1100);
  });
});
