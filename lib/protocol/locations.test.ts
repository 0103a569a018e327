import { describe, expect, it } from "vitest";
import { parseCredentialId } from "./ids.ts";
import { credentialLocation, entityLocation, propertyLocation } from "./locations.ts";

describe("document locations (docs/decisions.md#where-documents-live)", () => {
  it("entity of D", () => {
    expect(entityLocation("Alice.Example")).toEqual({
      kind: "entity",
      json: "https://alice.example/ident.json",
      page: "https://alice.example/",
      elementId: "ident-hub",
    });
  });
  it("property §:property:D", () => {
    expect(propertyLocation("blog.example")).toMatchObject({
      json: "https://blog.example/ident-property.json",
      page: "https://blog.example/",
      elementId: "ident-property",
    });
  });
  it.each([
    ["@bob@guild.example", "https://guild.example/bob/ident-credential.json", "https://guild.example/bob"],
    ["@bob@guild.example/members", "https://guild.example/members/bob/ident-credential.json", "https://guild.example/members/bob"],
    ["@Bob@GUILD.example/a/b", "https://guild.example/a/b/Bob/ident-credential.json", "https://guild.example/a/b/Bob"],
  ])("credential %s", (id, json, page) => {
    const parsed = parseCredentialId(id);
    expect(parsed).not.toBeNull();
    expect(credentialLocation(parsed!)).toEqual({ kind: "credential", json, page, elementId: "ident-credential" });
  });
});
