/**
 * The protocol's rules V1–V7 (docs/protocol.md), every row of its Errors table, the [bind] rules of
 * docs/decisions.md and every reason code,
 * each against the sample network over real HTTPS with the real guarded fetcher.
 */
import { describe, expect, it } from "vitest";
import { SearchResponse, type Claim, type EntityResult } from "ident-resolver";
import { REASONS } from "ident-resolver";
import { useSampleNetwork } from "../helpers/sample";

const ctx = useSampleNetwork();

async function entity(domain: string, opts: Parameters<typeof ctx.resolver>[0] = {}): Promise<EntityResult> {
  const out = await ctx.resolver(opts).search(domain);
  if (!out.ok) throw new Error("error" in out ? out.error.message : out.refused.message);
  expect(SearchResponse.parse(out.response)).toEqual(out.response);
  return out.response.results[0]!;
}
async function search(query: string, opts: Parameters<typeof ctx.resolver>[0] = {}) {
  const out = await ctx.resolver(opts).search(query);
  if (!out.ok) throw new Error("error" in out ? out.error.message : out.refused.message);
  expect(SearchResponse.parse(out.response)).toEqual(out.response);
  return out.response;
}
const byId = (claims: Claim[], id: string) => claims.find((c) => c.id === id)!;
const codes = (r: EntityResult) => r.entity.problems.map((p) => p.code);

describe("V1: entity document acceptance", () => {
  it("V1: a document with a valid network_id for its domain is accepted", async () => {
    const r = await entity("alice.example");
    expect(r.entity).toMatchObject({
      status: "accepted",
      domain: "alice.example",
      network_id: "§:entity:alice.example",
      entity_type: "person",
    });
    expect(r.jsonld).toMatchObject({ "@type": "Person", name: "Alice Moreau" });
  });
  it("V1: the minimum legal document (only network_id) gives the entity with nothing else", async () => {
    const r = await entity("minimal.test");
    expect(r.entity.status).toBe("accepted");
    expect(r.entity.details).toEqual({});
    expect([r.properties, r.credentials, r.connections]).toEqual([[], [], []]);
    expect(r.jsonld).toMatchObject({ "@type": "Thing", identifier: "§:entity:minimal.test" });
  });
  it("V1 / Errors row: entity document is not valid JSON → rejected (and not replaced by the embed)", async () => {
    const r = await entity("not-json.test");
    expect(r.entity.status).toBe("rejected");
    expect(codes(r)).toContain("invalid_json");
    expect(r.entity.source?.via).toBe("json");
    expect(r.jsonld).toBeNull();
  });
  it("V1 / Errors row: entity document lacks network_id → rejected", async () => {
    expect(codes(await entity("no-network-id.test"))).toEqual(["missing_network_id"]);
  });
  it("V1 / Errors row: network_id is empty → rejected", async () => {
    expect(codes(await entity("empty-network-id.test"))).toEqual(["missing_network_id"]);
  });
  it("V1 / Errors row: network_id does not match §:entity:{domain} → rejected", async () => {
    const r = await entity("bad-network-id.test");
    expect(r.entity).toMatchObject({ status: "rejected", network_id: "entity:bad-network-id.test" });
    expect(codes(r)).toEqual(["invalid_network_id"]);
  });
  it("V1: JSON that is not an object → rejected", async () => {
    expect(codes(await entity("array-doc.test"))).toEqual(["not_an_object"]);
  });
});

describe("docs/decisions.md#validation [bind]: network_id's domain is the domain fetched", () => {
  it("[bind] a document claiming another domain's network_id is rejected, naming the domain it claims", async () => {
    const r = await entity("borrowed-id.test");
    expect(r.entity.status).toBe("rejected");
    expect(r.entity.problems[0]).toMatchObject({ code: "network_id_domain_mismatch" });
    expect(r.entity.problems[0]?.message).toContain("alice.example");
    expect(r.jsonld).toBeNull();
  });
  it("[bind] a redirect does not change the domain the document was fetched for", async () => {
    const r = await entity("redirect-other.test");
    expect(r.entity.status).toBe("rejected");
    expect(codes(r)).toEqual(["network_id_domain_mismatch"]);
    expect(r.entity.source?.url).toBe("https://alice.example/ident.json");
  });
});

describe("V2: entries are validated independently", () => {
  it("V2 / Errors row: a malformed property or credential entry fails; the rest of the document remains valid", async () => {
    const r = await entity("mallory.example");
    expect(r.entity.status).toBe("accepted");
    expect(r.properties.map((c) => c.reason)).toEqual([
      "not_listed",
      "id_mismatch",
      "not_listed",
      "unreachable",
      "not_found",
      "invalid_entry",
      "duplicate",
    ]);
    expect(r.credentials.map((c) => c.reason)).toEqual(["entity_mismatch", "invalid_document", "invalid_entry"]);
    expect(byId(r.properties, "blog.mallory.example").claimed).toEqual({ id: "blog.mallory.example", name: "Malformed id" });
  });
});

describe("V3: property ownership", () => {
  it("V3: verifies when each side names the other", async () => {
    const claim = byId((await entity("alice.example")).properties, "§:property:blog.alice.example");
    expect(claim).toMatchObject({
      verified: true,
      source: { url: "https://blog.alice.example/ident-property.json", via: "json", http_status: 200 },
    });
    expect(claim.reason).toBeUndefined();
  });
  it("V3 / Errors row: property owner pair not mutually listed → does not verify (not_listed)", async () => {
    const claim = byId((await entity("mallory.example")).properties, "§:property:blog.alice.example");
    expect(claim).toMatchObject({ verified: false, reason: "not_listed" });
  });
  it("V3: with several owners each verifies independently; a listed owner that does not claim it gets not_claimed", async () => {
    const res = await search("§:property:jointventure.example");
    expect(res.query).toEqual({ input: "§:property:jointventure.example", kind: "property_id", domain: "jointventure.example" });
    expect(res.results.map((r) => [r.entity.domain, r.focus?.verified, r.focus?.reason])).toEqual([
      ["acme.example", true, undefined],
      ["beta.example", true, undefined],
      ["gamma.example", false, "not_claimed"],
    ]);
    expect(res.results[2]?.focus?.claimed).toBe("§:entity:gamma.example");
  });
  it("docs/decisions.md#verification [bind]: a property document must carry the id it is served for (id_mismatch)", async () => {
    expect(byId((await entity("mallory.example")).properties, "§:property:imposter-site.test").reason).toBe("id_mismatch");
  });
});

describe("V4: credentials", () => {
  it("V4: verifies when the issuer's document names the entity; path-prefix ids map to their collection", async () => {
    const r = await entity("alice.example");
    expect(r.credentials.map((c) => [c.id, c.verified])).toEqual([
      ["@alice@guild.example/members", true],
      ["@alice@guild.example/teachers", true],
      ["@alice@openfund.example", true],
    ]);
    expect(r.credentials[0]?.source?.url).toBe("https://guild.example/members/alice/ident-credential.json");
  });
  it("V4 / Errors row: ident_entity_id differs from the entity's network_id → does not verify", async () => {
    const claim = byId((await entity("mallory.example")).credentials, "@bob@guild.example/members");
    expect(claim).toMatchObject({ verified: false, reason: "entity_mismatch" });
    expect(claim.problems.at(-1)?.message).toBe(
      "guild.example's credential document names §:entity:bob.example, not this entity (§:entity:mallory.example)",
    );
  });
  it("V4: a credential query resolves the holder and focuses on the credential", async () => {
    const res = await search("@alice@guild.example/members");
    expect(res.results).toHaveLength(1);
    expect(res.results[0]?.entity.domain).toBe("alice.example");
    expect(res.results[0]?.focus).toMatchObject({ id: "@alice@guild.example/members", verified: true });
  });
});

describe("V5: minimal credential documents", () => {
  it("V5: only ident_entity_id and a title verifies; the issuer's title is the one kept", async () => {
    const claim = byId((await entity("erin.test")).credentials, "@erin@minimal-issuer.test");
    expect(claim.verified).toBe(true);
    expect(claim.document).toEqual({ ident_entity_id: "§:entity:erin.test", ident_credential: { title: "Listed member" } });
  });
  it("a credential document with another ident_credential.id verifies with the warning credential_id_mismatch", async () => {
    const claim = byId((await entity("erin.test")).credentials, "@erin@MINIMAL-ISSUER.test/alumni");
    expect(claim.verified).toBe(true);
    expect(claim.problems.map((p) => p.code)).toEqual(["credential_id_mismatch"]);
  });
});

describe("V6: identifier comparison is case-insensitive", () => {
  it("V6: mixed casing on both sides verifies; the published casing is kept", async () => {
    const r = await entity("ERIN.test");
    expect(r.entity).toMatchObject({ status: "accepted", domain: "erin.test", network_id: "§:entity:Erin.TEST" });
    expect(r.properties[0]).toMatchObject({ id: "§:property:Erin-Blog.TEST", verified: true });
  });
});

describe("V7: HTML embed fallback", () => {
  it("V7 / Errors row 404: a missing entity, property and credential document is read from its embed", async () => {
    const r = await entity("dana.test");
    expect(r.entity).toMatchObject({ status: "accepted", source: { via: "embed", url: "https://dana.test/" } });
    expect(r.properties[0]).toMatchObject({ verified: true, source: { via: "embed", url: "https://dana-studio.test/" } });
    expect(r.credentials[0]).toMatchObject({ verified: true, source: { via: "embed", url: "https://embed-issuer.test/dana" } });
  });
  it("Errors row: a status other than 200 is treated as not found (and so falls back)", async () => {
    const r = await entity("server-error.test");
    expect(r.entity).toMatchObject({ status: "accepted", source: { via: "embed" } });
  });
  it("V7: near-miss script forms are not the fallback → not_found", async () => {
    const r = await entity("bad-embeds.test");
    expect(r.entity.status).toBe("not_found");
    expect(r.entity.problems[0]?.message).toContain('id="ident-hub"');
  });
  it("not found at all: no document and no server", async () => {
    expect((await entity("nobody.test")).entity.status).toBe("unreachable");
  });
});

describe("Errors table: fetch conditions", () => {
  it("Errors row: a non-JSON Content-Type raises a warning; parsing is still attempted (BOM ignored)", async () => {
    const r = await entity("text-plain.test");
    expect(r.entity.status).toBe("accepted");
    expect(codes(r)).toEqual(["content_type", "unknown_entity_type", "invalid_field"]);
    expect(r.entity.problems.every((p) => p.severity === "warning")).toBe(true);
  });
  it("Errors row: a fetch that exceeds the timeout ends as timeout, without retry", async () => {
    const r = await entity("slow.test", { fetcher: { timeoutMs: 800 } });
    expect(r.entity.status).toBe("timeout");
    expect(ctx.net.requests.get("slow.test/ident.json")).toBe(1);
  });
  it("a redirect chain of 3 hops is followed", async () => {
    expect((await entity("redirect-ok.test")).entity.status).toBe("accepted");
  });
  it("a gzip-encoded document is decoded", async () => {
    expect((await entity("gzip-ok.test")).entity.status).toBe("accepted");
  });
});

describe("[bind] per-resolution budget", () => {
  it("[bind] properties past IDENT_MAX_CLAIMS are reported `limit` and not fetched", async () => {
    ctx.net.resetCounts();
    const r = await entity("budget.test", { limits: { maxClaims: 2 } });
    expect(r.properties.map((c) => [c.verified, c.reason])).toEqual([
      [true, undefined],
      [true, undefined],
      [false, "limit"],
    ]);
    expect(ctx.net.requests.get("budget-c.test/ident-property.json")).toBeUndefined();
  });
});

describe("every reason code occurs on the sample network", () => {
  it("all 15 reasons", async () => {
    const seen = new Set<string>();
    const add = (r: EntityResult) =>
      [...r.properties, ...r.credentials, ...r.connections, ...(r.focus ? [r.focus] : [])].forEach((c) => c.reason && seen.add(c.reason));
    add(await entity("mallory.example"));
    add(await entity("budget.test", { limits: { maxClaims: 2 } }));
    add(await entity("redirected-claims.test", { fetcher: { timeoutMs: 800 } }));
    for (const r of (await search("§:property:jointventure.example")).results) add(r);
    const redirected = await entity("redirected-claims.test", { fetcher: { timeoutMs: 800 } });
    expect(redirected.properties.map((c) => c.reason)).toEqual(["blocked", "too_large", "timeout"]);
    expect([...seen].sort()).toEqual([...REASONS].sort());
  });
  it("a connection verifies by rel=me; unsafe and missing back-links do not", async () => {
    expect((await entity("alice.example")).connections[0]).toMatchObject({
      verified: true,
      source: { via: "page", url: "https://social.example/@alice" },
    });
    const m = await entity("mallory.example");
    expect(m.connections.map((c) => c.reason)).toEqual(["no_backlink", "unsafe_url"]);
  });
});

describe("JSON-LD holds only the accepted entity and its verified claims (docs/decisions.md#json-ld)", () => {
  it("alice: sameAs lists the verified blog and rel=me profile; hasCredential the issuers' titles", async () => {
    const r = await entity("alice.example");
    expect(r.jsonld).toEqual({
      "@context": "https://schema.org",
      "@type": "Person",
      name: "Alice Moreau",
      url: "https://alice.example/",
      description: "Furniture maker and writer. I publish workshop notes on my blog and teach joinery at the guild.",
      identifier: "§:entity:alice.example",
      sameAs: ["https://blog.alice.example/", "https://social.example/@alice"],
      email: "alice@alice.example",
      hasCredential: [
        {
          "@type": "EducationalOccupationalCredential",
          name: "Member since 2019",
          credentialCategory: "Member",
          url: "https://guild.example/members/alice",
          recognizedBy: { "@type": "Organization", name: "The Makers Guild", url: "https://guild.example/" },
        },
        {
          "@type": "EducationalOccupationalCredential",
          name: "Joinery teacher",
          credentialCategory: "Employment",
          recognizedBy: { "@type": "Organization", name: "The Makers Guild", url: "https://guild.example/" },
        },
        {
          "@type": "EducationalOccupationalCredential",
          name: "Supporter, 2025",
          credentialCategory: "Support",
          url: "https://openfund.example/alice",
          recognizedBy: { "@type": "Organization", name: "Open Web Fund", url: "https://openfund.example/" },
        },
      ],
    });
  });
  it("mallory: nothing verified, nothing claimed in JSON-LD", async () => {
    const r = await entity("mallory.example");
    expect(r.jsonld).toEqual({
      "@context": "https://schema.org",
      "@type": "Person",
      name: "Mallory Finch",
      url: "https://mallory.example/",
      description: "Claims more than she can show.",
      identifier: "§:entity:mallory.example",
    });
  });
});

describe("request headers (docs/decisions.md#fetching)", () => {
  it("sends the User-Agent and the Accept of each kind", async () => {
    ctx.net.resetCounts();
    await entity("dana.test");
    const json = ctx.net.log.find((l) => l.path === "/ident.json");
    const html = ctx.net.log.find((l) => l.path === "/");
    expect(json?.headers).toMatchObject({ "user-agent": "ident-resolver/test", accept: "application/json, */*;q=0.1" });
    expect(html?.headers).toMatchObject({ accept: "text/html, */*;q=0.1" });
  });
});

describe("hostile documents", () => {
  it("a counterpart document nested 10,000 deep is invalid_document, and the result can still be printed", async () => {
    const r = await entity("deep-json.test");
    expect(r.properties[0]).toMatchObject({ verified: false, reason: "invalid_document" });
    expect(r.properties[0]?.problems.at(-1)?.message).toContain("nested deeper than 64 levels");
    expect(() => JSON.stringify(r)).not.toThrow();
  });
});
