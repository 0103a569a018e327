import { describe, expect, it } from "vitest";
import { buildJsonLd, profilePage, serializeJsonLd, type JsonLdInput } from "./jsonld.ts";

/** The JSON-LD as a crawler reads it. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v)) as Record<string, string>;

const base: JsonLdInput = {
  domain: "acme.example",
  network_id: "§:entity:acme.example",
  details: {},
  propertyUrls: [],
  connectionUrls: [],
  credentials: [],
};

describe("JSON-LD (docs/decisions.md#json-ld)", () => {
  it("organization: Organization with legal details, sameAs and hasCredential", () => {
    const ld = buildJsonLd({
      ...base,
      entity_type: "organization",
      details: {
        name: "Acme",
        description: "Tools",
        email: "hi@acme.example",
        legal_name: "Acme, Inc.",
        established: "1998",
        location: "Portland",
      },
      propertyUrls: ["https://shop.acme.example/", "javascript:alert(1)", "https://shop.acme.example/"],
      connectionUrls: ["https://social.example/@acme"],
      credentials: [{ title: "Member business", type: "Member", issuerName: "Chamber", issuerDomain: "chamber.example" }],
    });
    expect(ld).toEqual({
      "@context": "https://schema.org",
      "@type": "Organization",
      name: "Acme",
      url: "https://acme.example/",
      description: "Tools",
      identifier: "§:entity:acme.example",
      sameAs: ["https://shop.acme.example/", "https://social.example/@acme"],
      email: "hi@acme.example",
      legalName: "Acme, Inc.",
      foundingDate: "1998",
      location: "Portland",
      hasCredential: [
        {
          "@type": "EducationalOccupationalCredential",
          name: "Member business",
          credentialCategory: "Member",
          recognizedBy: { "@type": "Organization", name: "Chamber", url: "https://chamber.example/" },
        },
      ],
    });
  });
  it("person: Person without organisation fields", () => {
    const ld = buildJsonLd({ ...base, entity_type: "person", details: { name: "Alice", legal_name: "x", location: "Lyon" } });
    expect(ld).toEqual({
      "@context": "https://schema.org",
      "@type": "Person",
      name: "Alice",
      url: "https://acme.example/",
      identifier: "§:entity:acme.example",
    });
  });
  it("any other entity_type: Thing", () => {
    expect(plain(buildJsonLd({ ...base, entity_type: "robot" }))["@type"]).toBe("Thing");
    expect(plain(buildJsonLd(base))["@type"]).toBe("Thing");
  });
  it("cuts names to 300 characters and descriptions to 5,000", () => {
    const ld = plain(buildJsonLd({ ...base, entity_type: "person", details: { name: "n".repeat(400), description: "d".repeat(6000) } }));
    expect(Array.from(ld.name!)).toHaveLength(300);
    expect(Array.from(ld.description!)).toHaveLength(5000);
  });
  it("escapes <, >, &, U+2028 and U+2029 so the JSON round-trips and cannot close its element", () => {
    const value = { name: "</script><img src=x onerror=alert(1)>&amp;\u2028\u2029" };
    const text = serializeJsonLd(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(text).toContain("\\u003c/script\\u003e");
    expect(JSON.parse(text)).toEqual(value);
  });
  it.each([
    ["DEL", "\u007f", "\\u007f"],
    ["U+0085 (C1)", "\u0085", "\\u0085"],
    ["U+FFFE", "\ufffe", "\\ufffe"],
    ["U+FDD0", "\ufdd0", "\\ufdd0"],
  ])("escapes %s, an HTML parse error in a script's text, and round-trips (docs/decisions.md#json-ld)", (_, ch, escaped) => {
    const value = { name: `a${ch}b` };
    const text = serializeJsonLd(value);
    expect(text).not.toContain(ch);
    expect(text).toContain(escaped);
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe("ProfilePage (docs/decisions.md#json-ld)", () => {
  it("wraps the entity as its mainEntity, with the page's URL and the last check as dateModified; the entity is not changed", () => {
    const person = { "@context": "https://schema.org", "@type": "Person", name: "Alice", identifier: "§:entity:alice.example" };
    const before = structuredClone(person);
    expect(profilePage(person, { url: "https://r.example/entity/alice.example", dateModified: "2026-11-25T10:00:00.000Z" })).toEqual({
      "@context": "https://schema.org",
      "@type": "ProfilePage",
      url: "https://r.example/entity/alice.example",
      dateModified: "2026-11-25T10:00:00.000Z",
      mainEntity: { "@type": "Person", name: "Alice", identifier: "§:entity:alice.example" },
    });
    expect(person).toEqual(before);
  });
});
