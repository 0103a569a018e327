import { htmlReady } from "../documents/embed.ts";
import { beforeAll, describe, expect, it } from "vitest";
import type { CredentialDocument } from "../documents/credential.ts";
import type { PropertyDocument } from "../documents/property.ts";
import { verifyConnection } from "./connection.ts";
import { verifyCredential } from "./credential.ts";
import { verifyProperty } from "./property.ts";

// The readers need htmlparser2 loaded (lib/documents/embed.ts).
beforeAll(htmlReady);

const ALICE = "§:entity:alice.example";
const BLOG = "§:property:blog.example";
const propertyDoc = (id: string, owners: string[]): PropertyDocument => ({ ident_property: { id, ownership: owners } });
const credentialDoc = (holder: string): CredentialDocument => ({ ident_entity_id: holder, ident_credential: { title: "Member" } });

describe("V3: property ownership", () => {
  it("verifies when the property document names the entity", () => {
    expect(verifyProperty(ALICE, BLOG, propertyDoc(BLOG, [ALICE]), "blog.example")).toEqual({ verified: true });
  });
  it("Errors row: owner pair not mutually listed → not_listed", () => {
    const verdict = verifyProperty(ALICE, BLOG, propertyDoc(BLOG, ["§:entity:bob.example"]), "blog.example");
    expect(verdict).toMatchObject({ verified: false, reason: "not_listed" });
    expect(!verdict.verified && verdict.message).toContain("§:entity:alice.example");
  });
  it("with several owners, each verifies independently", () => {
    const doc = propertyDoc(BLOG, [ALICE, "§:entity:bob.example"]);
    expect(verifyProperty(ALICE, BLOG, doc, "blog.example").verified).toBe(true);
    expect(verifyProperty("§:entity:bob.example", BLOG, doc, "blog.example").verified).toBe(true);
    expect(verifyProperty("§:entity:carol.example", BLOG, doc, "blog.example").verified).toBe(false);
  });
  it("docs/decisions.md#verification [bind]: a document carrying another property's id → id_mismatch", () => {
    const verdict = verifyProperty(ALICE, "§:property:evil.example", propertyDoc(BLOG, [ALICE]), "evil.example");
    expect(verdict).toMatchObject({ verified: false, reason: "id_mismatch" });
  });
  it("V6: ids compare case-insensitively", () => {
    expect(
      verifyProperty("§:entity:Alice.Example", "§:PROPERTY:Blog.example", propertyDoc(BLOG, ["§:entity:ALICE.EXAMPLE"]), "blog.example")
        .verified,
    ).toBe(true);
  });
});

describe("V4: credential back-link", () => {
  it("verifies when ident_entity_id is the entity's network_id", () => {
    expect(verifyCredential(ALICE, credentialDoc(ALICE), "guild.example")).toEqual({ verified: true });
  });
  it("Errors row: ident_entity_id differs → entity_mismatch, message names both", () => {
    const verdict = verifyCredential(ALICE, credentialDoc("§:entity:bob.example"), "guild.example");
    expect(verdict).toMatchObject({ verified: false, reason: "entity_mismatch" });
    expect(!verdict.verified && verdict.message).toBe(
      "guild.example's credential document names §:entity:bob.example, not this entity (§:entity:alice.example)",
    );
  });
  it("V6: case-insensitive", () => {
    expect(verifyCredential("§:entity:ALICE.example", credentialDoc("§:entity:alice.EXAMPLE"), "guild.example").verified).toBe(true);
  });
});

describe("rel=me connections (docs/decisions.md#verification)", () => {
  const page = "https://social.example/@alice";
  it.each([
    [`<a rel="me" href="https://alice.example/">x</a>`, true],
    [`<a rel="me" href="https://alice.example">x</a>`, true],
    [`<a rel="nofollow ME" href="https://ALICE.example/">x</a>`, true],
    [`<link rel="me" href="https://alice.example/">`, true],
    [`<a rel="me" href="http://alice.example/">x</a>`, false],
    [`<a rel="me" href="https://alice.example/about">x</a>`, false],
    [`<a rel="me" href="https://alice.example/?x">x</a>`, false],
    [`<a rel="me" href="https://alice.example:8443/">x</a>`, false],
    [`<a rel="me" href="https://evil.alice.example/">x</a>`, false],
    [`<a rel="me" href="https://alice.example.evil.test/">x</a>`, false],
    [`<a rel="meme" href="https://alice.example/">x</a>`, false],
    [`<a href="https://alice.example/">x</a>`, false],
    [`<div rel="me" href="https://alice.example/">x</div>`, false],
    [`<!-- <a rel="me" href="https://alice.example/">x</a> -->`, false],
    [`<a rel="me" href="/">x</a>`, false],
  ])("%s → %s", (html, verified) => {
    expect(verifyConnection("alice.example", page, html).verified).toBe(verified);
  });
  it("says what is missing", () => {
    const verdict = verifyConnection("alice.example", page, "<p>nothing</p>");
    expect(verdict).toMatchObject({ verified: false, reason: "no_backlink" });
  });
});
