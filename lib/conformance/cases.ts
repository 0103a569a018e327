/**
 * The protocol's conformance cases as data (docs/library.md#conformance): for each, what the
 * publishers serve, the query, and the verdict a correct resolver gives, with the rule of
 * docs/protocol.md it tests. Verdicts are the protocol's (accepted or not, verified or not); the
 * reason is this resolver's word for it, given for reading, and not compared by the runner.
 * Every domain is under `.test`, reserved for testing; each case has its own.
 */

/** One response a publisher gives, at one URL. */
export type Published = {
  /** @default 200 */
  status?: number;
  /** @default "application/json" for a body that is an object, "text/html" for a string */
  contentType?: string;
  /** JSON (an object, sent as it is serialized) or text, sent as written. */
  body?: unknown;
  /** Never answers: the resolver's deadline must end the fetch. */
  hang?: true;
};

export type ExpectedClaim = {
  list: "properties" | "credentials" | "connections";
  /** Its position in the entity's list, as published. */
  index: number;
  verified: boolean;
  /** This resolver's reason when not verified (docs/decisions.md#verification): for reading. */
  reason?: string;
};

/** One entity of the answer: accepted or not, and each claim's verdict; for a property or credential query, the claim it was about. */
export type ExpectedEntity = { domain: string; accepted: boolean; claims?: ExpectedClaim[]; focus?: { verified: boolean } };

export type ConformanceCase = {
  id: string;
  /** The rule of docs/protocol.md it tests: `V1`…`V7`, `Errors: …` (a row of the table), `rel=me`, `Serving`. */
  rule: string;
  says: string;
  /** What every publisher serves, by URL; any other URL answers 404. */
  publishers: Record<string, Published>;
  query: string;
  expect: ExpectedEntity[];
  /** Requests a URL may get at most while the case runs (the protocol's "no retry"). */
  requestsAtMost?: Record<string, number>;
};

const S = "\u00a7";
const entity = (domain: string, rest: Record<string, unknown> = {}) => ({ network_id: `${S}:entity:${domain}`, ...rest });
const property = (id: string, owners: string[]) => ({
  ident_property: { id: `${S}:property:${id}`, ownership: owners.map((o) => ({ network_id: `${S}:entity:${o}` })) },
});
const credential = (holder: string, title = "Member") => ({ ident_entity_id: `${S}:entity:${holder}`, ident_credential: { title } });
const embed = (id: string, doc: unknown, attributes = `type="application/json" id="${id}"`) =>
  `<!doctype html><title>page</title><script ${attributes}>${JSON.stringify(doc)}</script>`;
const at = (url: string, body: unknown, rest: Omit<Published, "body"> = {}): Record<string, Published> => ({ [url]: { body, ...rest } });

/** The publishers of a case, from its parts. */
const sites = (...parts: Record<string, Published>[]): Record<string, Published> => Object.assign({}, ...parts);

/** A case's entity document alone, at `https://{domain}/ident.json`. */
const alone = (domain: string, published: Published) => ({ [`https://${domain}/ident.json`]: published });

export const CASES: readonly ConformanceCase[] = [
  // V1: entity documents.
  {
    id: "v1-accepted",
    rule: "V1",
    says: "a document with a non-empty network_id of the shape §:entity:{domain} is accepted",
    publishers: alone("v1-accepted.test", { body: entity("v1-accepted.test") }),
    query: "v1-accepted.test",
    expect: [{ domain: "v1-accepted.test", accepted: true, claims: [] }],
  },
  {
    id: "v1-not-an-object",
    rule: "V1",
    says: "JSON that is not an object is rejected",
    publishers: alone("v1-not-an-object.test", { body: [entity("v1-not-an-object.test")] }),
    query: "v1-not-an-object.test",
    expect: [{ domain: "v1-not-an-object.test", accepted: false }],
  },
  {
    id: "errors-not-json",
    rule: "Errors: the entity document is not valid JSON",
    says: "a document that does not parse as JSON is rejected",
    publishers: alone("errors-not-json.test", { body: '{"network_id": "§:entity:errors-not-json.test",', contentType: "application/json" }),
    query: "errors-not-json.test",
    expect: [{ domain: "errors-not-json.test", accepted: false }],
  },
  {
    id: "errors-no-network-id",
    rule: "Errors: the entity document lacks network_id, or it is empty",
    says: "a document without network_id is rejected",
    publishers: alone("errors-no-network-id.test", { body: { details: { name: "No id" } } }),
    query: "errors-no-network-id.test",
    expect: [{ domain: "errors-no-network-id.test", accepted: false }],
  },
  {
    id: "errors-empty-network-id",
    rule: "Errors: the entity document lacks network_id, or it is empty",
    says: "a document whose network_id is empty is rejected",
    publishers: alone("errors-empty-network-id.test", { body: { network_id: "" } }),
    query: "errors-empty-network-id.test",
    expect: [{ domain: "errors-empty-network-id.test", accepted: false }],
  },
  {
    id: "errors-other-domain",
    rule: "Errors: network_id does not match §:entity:{domain}",
    says: "a document naming another domain's entity is rejected",
    publishers: alone("errors-other-domain.test", { body: entity("someone-else.test") }),
    query: "errors-other-domain.test",
    expect: [{ domain: "errors-other-domain.test", accepted: false }],
  },
  {
    id: "errors-not-a-network-id",
    rule: "Errors: network_id does not match §:entity:{domain}",
    says: "a network_id not of the shape §:entity:{domain} is rejected",
    publishers: alone("errors-not-a-network-id.test", { body: { network_id: "errors-not-a-network-id.test" } }),
    query: "errors-not-a-network-id.test",
    expect: [{ domain: "errors-not-a-network-id.test", accepted: false }],
  },
  // V2: entries stand alone.
  {
    id: "errors-malformed-entry",
    rule: "Errors: a property or credential entry is malformed",
    says: "a malformed entry fails alone; the entries beside it are checked and the document stays valid (V2)",
    publishers: sites(
      alone("errors-malformed-entry.test", {
        body: entity("errors-malformed-entry.test", {
          properties: [{ id: 42 }, { id: `${S}:property:errors-malformed-entry-site.test` }],
          credentials: [{ title: "no id" }],
        }),
      }),
      at(
        "https://errors-malformed-entry-site.test/ident-property.json",
        property("errors-malformed-entry-site.test", ["errors-malformed-entry.test"]),
      ),
    ),
    query: "errors-malformed-entry.test",
    expect: [
      {
        domain: "errors-malformed-entry.test",
        accepted: true,
        claims: [
          { list: "properties", index: 0, verified: false, reason: "invalid_entry" },
          { list: "properties", index: 1, verified: true },
          { list: "credentials", index: 0, verified: false, reason: "invalid_entry" },
        ],
      },
    ],
  },
  // V3: property ownership.
  {
    id: "v3-both-name-each-other",
    rule: "V3",
    says: "a property verifies when the entity lists it and its document's ownership lists the entity",
    publishers: sites(
      alone("v3-both.test", { body: entity("v3-both.test", { properties: [{ id: `${S}:property:v3-both-site.test` }] }) }),
      at("https://v3-both-site.test/ident-property.json", property("v3-both-site.test", ["v3-both.test"])),
    ),
    query: "v3-both.test",
    expect: [{ domain: "v3-both.test", accepted: true, claims: [{ list: "properties", index: 0, verified: true }] }],
  },
  {
    id: "errors-not-both-listed",
    rule: "Errors: the property and the entity do not both list each other",
    says: "a property whose document does not list the entity does not verify (V3)",
    publishers: sites(
      alone("errors-not-listed.test", {
        body: entity("errors-not-listed.test", { properties: [{ id: `${S}:property:errors-not-listed-site.test` }] }),
      }),
      at("https://errors-not-listed-site.test/ident-property.json", property("errors-not-listed-site.test", ["someone-else.test"])),
    ),
    query: "errors-not-listed.test",
    expect: [
      {
        domain: "errors-not-listed.test",
        accepted: true,
        claims: [{ list: "properties", index: 0, verified: false, reason: "not_listed" }],
      },
    ],
  },
  {
    id: "v3-several-owners",
    rule: "V3",
    says: "with several owners each verifies alone; an owner whose entity does not list the property does not",
    publishers: sites(
      at("https://v3-owners-site.test/ident-property.json", property("v3-owners-site.test", ["v3-owner-a.test", "v3-owner-b.test"])),
      alone("v3-owner-a.test", { body: entity("v3-owner-a.test", { properties: [{ id: `${S}:property:v3-owners-site.test` }] }) }),
      alone("v3-owner-b.test", { body: entity("v3-owner-b.test") }),
    ),
    query: `${S}:property:v3-owners-site.test`,
    expect: [
      { domain: "v3-owner-a.test", accepted: true, focus: { verified: true } },
      { domain: "v3-owner-b.test", accepted: true, focus: { verified: false } },
    ],
  },
  // V4, V5: credentials.
  {
    id: "v4-credential",
    rule: "V4",
    says: "a credential verifies when the issuer's document names the entity; a path-prefixed id is served under its path",
    publishers: sites(
      alone("v4-holder.test", {
        body: entity("v4-holder.test", { credentials: [{ id: "@ana@v4-issuer.test/members", title: "Member" }] }),
      }),
      at("https://v4-issuer.test/members/ana/ident-credential.json", {
        ident_entity_id: `${S}:entity:v4-holder.test`,
        ident_credential: { title: "Member", type: "Member", property: { id: `${S}:property:v4-issuer.test` } },
      }),
    ),
    query: "v4-holder.test",
    expect: [{ domain: "v4-holder.test", accepted: true, claims: [{ list: "credentials", index: 0, verified: true }] }],
  },
  {
    id: "errors-someone-elses-credential",
    rule: "Errors: the credential's ident_entity_id differs from the entity's network_id",
    says: "a credential whose document names another entity does not verify (V4)",
    publishers: sites(
      alone("errors-other-holder.test", {
        body: entity("errors-other-holder.test", { credentials: [{ id: "@ana@errors-other-issuer.test" }] }),
      }),
      at("https://errors-other-issuer.test/ana/ident-credential.json", credential("someone-else.test")),
    ),
    query: "errors-other-holder.test",
    expect: [
      {
        domain: "errors-other-holder.test",
        accepted: true,
        claims: [{ list: "credentials", index: 0, verified: false, reason: "entity_mismatch" }],
      },
    ],
  },
  {
    id: "v4-no-document",
    rule: "V4",
    says: "a credential whose document the issuer does not serve does not verify",
    // The issuer is there and answers 404 for the document and for the page of its fallback.
    publishers: sites(
      alone("v4-missing.test", { body: entity("v4-missing.test", { credentials: [{ id: "@ana@v4-missing-issuer.test" }] }) }),
      at("https://v4-missing-issuer.test/", "<!doctype html><title>Issuer</title>"),
    ),
    query: "v4-missing.test",
    expect: [
      { domain: "v4-missing.test", accepted: true, claims: [{ list: "credentials", index: 0, verified: false, reason: "not_found" }] },
    ],
  },
  {
    id: "v5-minimum",
    rule: "V5",
    says: "a credential document with only ident_entity_id and a titled ident_credential verifies",
    publishers: sites(
      alone("v5-holder.test", { body: entity("v5-holder.test", { credentials: [{ id: "@ana@v5-issuer.test" }] }) }),
      at("https://v5-issuer.test/ana/ident-credential.json", credential("v5-holder.test", "Supporter")),
    ),
    query: "v5-holder.test",
    expect: [{ domain: "v5-holder.test", accepted: true, claims: [{ list: "credentials", index: 0, verified: true }] }],
  },
  // V6: identifiers compare without case.
  {
    id: "v6-case",
    rule: "V6",
    says: "ids compare without case: a property listed in capitals, and an owner named in capitals, verify",
    publishers: sites(
      alone("v6-case.test", { body: entity("v6-case.test", { properties: [{ id: `${S}:property:V6-Case-Site.test` }] }) }),
      at("https://v6-case-site.test/ident-property.json", {
        ident_property: { id: `${S}:property:v6-case-site.test`, ownership: [{ network_id: `${S}:entity:V6-CASE.test` }] },
      }),
    ),
    query: "v6-case.test",
    expect: [{ domain: "v6-case.test", accepted: true, claims: [{ list: "properties", index: 0, verified: true }] }],
  },
  // V7: the HTML fallback.
  {
    id: "v7-entity-embed",
    rule: "V7",
    says: "an entity document not found is read from the page's ident-hub embed",
    publishers: at("https://v7-entity.test/", embed("ident-hub", entity("v7-entity.test"))),
    query: "v7-entity.test",
    expect: [{ domain: "v7-entity.test", accepted: true, claims: [] }],
  },
  {
    id: "v7-property-embed",
    rule: "V7",
    says: "a property document not found is read from the site's ident-property embed",
    publishers: sites(
      alone("v7-property.test", { body: entity("v7-property.test", { properties: [{ id: `${S}:property:v7-property-site.test` }] }) }),
      at("https://v7-property-site.test/", embed("ident-property", property("v7-property-site.test", ["v7-property.test"]))),
    ),
    query: "v7-property.test",
    expect: [{ domain: "v7-property.test", accepted: true, claims: [{ list: "properties", index: 0, verified: true }] }],
  },
  {
    id: "v7-credential-embed",
    rule: "V7",
    says: "a credential document not found is read from the holder's page's ident-credential embed",
    publishers: sites(
      alone("v7-credential.test", { body: entity("v7-credential.test", { credentials: [{ id: "@ana@v7-issuer.test/members" }] }) }),
      at("https://v7-issuer.test/members/ana", embed("ident-credential", credential("v7-credential.test"))),
    ),
    query: "v7-credential.test",
    expect: [{ domain: "v7-credential.test", accepted: true, claims: [{ list: "credentials", index: 0, verified: true }] }],
  },
  {
    id: "v7-either-order-and-quotes",
    rule: "V7",
    says: "the embed's two attributes may come in either order, each value in single or double quotes",
    publishers: at("https://v7-order.test/", embed("ident-hub", entity("v7-order.test"), `id='ident-hub' type="application/json"`)),
    query: "v7-order.test",
    expect: [{ domain: "v7-order.test", accepted: true, claims: [] }],
  },
  {
    id: "v7-no-other-variation",
    rule: "V7",
    says: "no other variation is the fallback: another type is not read",
    publishers: at(
      "https://v7-variation.test/",
      embed("ident-hub", entity("v7-variation.test"), `type="application/ld+json" id="ident-hub"`),
    ),
    query: "v7-variation.test",
    expect: [{ domain: "v7-variation.test", accepted: false }],
  },
  // Errors: fetching.
  {
    id: "errors-404",
    rule: "Errors: the fetch answers 404",
    says: "an entity document that answers 404, with no embed on the page, is not found",
    publishers: at("https://errors-404.test/", "<!doctype html><title>No embed here</title>"),
    query: "errors-404.test",
    expect: [{ domain: "errors-404.test", accepted: false }],
  },
  {
    id: "errors-other-status",
    rule: "Errors: the fetch answers any status other than 200",
    says: "a document answered with 500 is not found, whatever its body; a claim so answered does not verify",
    publishers: sites(
      alone("errors-500.test", { body: entity("errors-500.test", { properties: [{ id: `${S}:property:errors-500-site.test` }] }) }),
      at("https://errors-500-site.test/ident-property.json", property("errors-500-site.test", ["errors-500.test"]), { status: 500 }),
    ),
    query: "errors-500.test",
    expect: [
      { domain: "errors-500.test", accepted: true, claims: [{ list: "properties", index: 0, verified: false, reason: "not_found" }] },
    ],
  },
  {
    id: "errors-content-type",
    rule: "Errors: the entity document's Content-Type is not JSON",
    says: "an entity document served as text/plain is parsed all the same",
    publishers: alone("errors-content-type.test", { body: JSON.stringify(entity("errors-content-type.test")), contentType: "text/plain" }),
    query: "errors-content-type.test",
    expect: [{ domain: "errors-content-type.test", accepted: true, claims: [] }],
  },
  {
    id: "errors-timeout",
    rule: "Errors: the fetch takes longer than the timeout",
    says: "an entity document that never comes fails at the resolver's deadline, with no retry",
    publishers: alone("errors-timeout.test", { hang: true }),
    query: "errors-timeout.test",
    expect: [{ domain: "errors-timeout.test", accepted: false }],
    requestsAtMost: { "https://errors-timeout.test/ident.json": 1 },
  },
  // rel=me connections.
  {
    id: "rel-me",
    rule: "rel=me",
    says: "a profile page that links back to the entity's site with rel=me verifies; one that does not, does not",
    publishers: sites(
      alone("rel-me.test", {
        body: entity("rel-me.test", {
          other_connections: [{ id: "https://rel-me-social.test/@ana" }, { id: "https://rel-me-social.test/@other" }],
        }),
      }),
      at("https://rel-me-social.test/@ana", '<!doctype html><title>Ana</title><a rel="me" href="https://rel-me.test/">site</a>'),
      at("https://rel-me-social.test/@other", '<!doctype html><title>Other</title><a href="https://rel-me.test/">site</a>'),
    ),
    query: "rel-me.test",
    expect: [
      {
        domain: "rel-me.test",
        accepted: true,
        claims: [
          { list: "connections", index: 0, verified: true },
          { list: "connections", index: 1, verified: false, reason: "no_backlink" },
        ],
      },
    ],
  },
  // Serving: where each document is, and queries by the other ids.
  {
    id: "serving-credential-query",
    rule: "Serving",
    says: "a credential id resolves to its holder, from the issuer's document, with the credential's verdict",
    publishers: sites(
      alone("serving-holder.test", { body: entity("serving-holder.test", { credentials: [{ id: "@ana@serving-issuer.test/team" }] }) }),
      at("https://serving-issuer.test/team/ana/ident-credential.json", credential("serving-holder.test", "Staff")),
    ),
    query: "@ana@serving-issuer.test/team",
    expect: [{ domain: "serving-holder.test", accepted: true, focus: { verified: true } }],
  },
];

/** Every rule of docs/protocol.md a case must test at least once. */
export const PROTOCOL_RULES: readonly string[] = [
  "V1",
  "V2",
  "V3",
  "V4",
  "V5",
  "V6",
  "V7",
  "Errors: the fetch answers 404",
  "Errors: the fetch answers any status other than 200",
  "Errors: the entity document's Content-Type is not JSON",
  "Errors: the entity document is not valid JSON",
  "Errors: the entity document lacks network_id, or it is empty",
  "Errors: network_id does not match §:entity:{domain}",
  "Errors: a property or credential entry is malformed",
  "Errors: the credential's ident_entity_id differs from the entity's network_id",
  "Errors: the property and the entity do not both list each other",
  "Errors: the fetch takes longer than the timeout",
  "rel=me",
  "Serving",
];

/** The rules each case covers: its own, and V2 for a malformed entry (the row says V2). */
export const rulesOf = (c: ConformanceCase): string[] =>
  c.rule === "Errors: a property or credential entry is malformed" ? [c.rule, "V2"] : [c.rule];
