/**
 * Identifiers of the protocol (docs/protocol.md#identifiers, docs/decisions.md#identifiers) and the queries the resolver accepts (docs/decisions.md#interfaces).
 * Every comparison is case-insensitive (V6); parsed values keep the published casing.
 */

/** U+00A7, the protocol's section sign. */
export const SECTION = "\u00a7";

const DOMAIN_RE = /^[a-z0-9.-]+\.[a-z]{2,}$/i;
const LABEL_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
const USERNAME_RE = /^[A-Za-z0-9_.-]+$/;
const PATH_RE = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

/** A word matched in any case, for a JSON Schema pattern (which has no `i` flag). */
const anyCase = (word: string) => [...word].map((c) => (/[a-z]/.test(c) ? `[${c.toUpperCase()}${c}]` : c)).join("");
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
/** A domain as {@link isDomain} reads it; `end` is what may follow it. */
const domainPattern = (end: string) => `(?=[^/]{1,253}(?:${end}))(?:${LABEL}\\.)+(?=[A-Za-z]{2,63}(?:${end}))${LABEL}`;
const SEGMENT = "(?!\\.\\.?(?:/|$))[A-Za-z0-9_.-]+";

/**
 * The identifiers as ECMA-262 patterns, for the JSON Schemas editors use (docs/publishing.md#schemas).
 * The parsers below stay the rule; test/integration/schemas.test.ts holds the two to the same answers.
 */
export const ID_PATTERNS = {
  networkId: `^${SECTION}:${anyCase("entity")}:${domainPattern("$")}$`,
  propertyId: `^${SECTION}:${anyCase("property")}:${domainPattern("$")}$`,
  credentialId: `^@(?!\\.\\.?@)[A-Za-z0-9_.-]+@${domainPattern("/|$")}(?:/${SEGMENT})*$`,
} as const;

/** Longest query accepted (docs/decisions.md#interfaces). */
export const MAX_QUERY_LENGTH = 512;

/**
 * A domain as docs/decisions.md#identifiers defines it: the protocol's pattern, no empty label, labels of 1–63 characters not
 * starting or ending with `-`, at most 253 characters. An IP address is never a domain.
 */
export function isDomain(value: string): boolean {
  if (value.length > 253 || !DOMAIN_RE.test(value)) return false;
  return value.split(".").every((label) => LABEL_RE.test(label));
}

/** A username: the protocol's pattern, and never `.` or `..`, since it becomes a path segment (docs/decisions.md#identifiers). */
export function isUsername(value: string): boolean {
  return USERNAME_RE.test(value) && value !== "." && value !== "..";
}

/** A credential path (docs/decisions.md#identifiers): the protocol's pattern, and no `.` or `..` segment. */
export function isIdPath(value: string): boolean {
  return PATH_RE.test(value) && value.split("/").every((s) => s !== "." && s !== "..");
}

/** Case-insensitive key of an identifier (V6). */
export function idKey(id: string): string {
  return id.toLowerCase();
}

export function sameId(a: string, b: string): boolean {
  return idKey(a) === idKey(b);
}

type Prefixed = "entity" | "property";

/** Splits `§:{kind}:{domain}` as the protocol says: prefix before the last colon, domain after. */
function parsePrefixed(value: string, kind: Prefixed): string | null {
  const colon = value.lastIndexOf(":");
  if (colon < 0) return null;
  const prefix = value.slice(0, colon);
  const domain = value.slice(colon + 1);
  if (prefix.toLowerCase() !== `${SECTION}:${kind}`) return null;
  return isDomain(domain) ? domain : null;
}

/** The domain of a network_id `§:entity:{domain}` (V1), or null when the shape is wrong. */
export function parseNetworkId(value: string): string | null {
  return parsePrefixed(value, "entity");
}

/** The domain of a property_id `§:property:{domain}`, or null. */
export function parsePropertyId(value: string): string | null {
  return parsePrefixed(value, "property");
}

/** A dataset_id `§:dataset:{domain}/{path}`, or null. */
export function parseDatasetId(value: string): { domain: string; path: string } | null {
  const prefix = `${SECTION}:dataset:`;
  if (value.slice(0, prefix.length).toLowerCase() !== prefix) return null;
  const rest = value.slice(prefix.length);
  const slash = rest.indexOf("/");
  if (slash < 0) return null;
  const domain = rest.slice(0, slash);
  const path = rest.slice(slash + 1);
  return isDomain(domain) && isIdPath(path) ? { domain, path } : null;
}

export type CredentialId = { username: string; domain: string; path: string | null };

/** A credential_id `@{username}@{domain}[/{path}]` (docs/decisions.md#identifiers), or null. */
export function parseCredentialId(value: string): CredentialId | null {
  const m = /^@([^@/]+)@([^@/]+)(?:\/(.+))?$/.exec(value);
  if (!m) return null;
  const [, username = "", domain = "", path] = m;
  if (!isUsername(username) || !isDomain(domain)) return null;
  if (path !== undefined && !isIdPath(path)) return null;
  return { username, domain, path: path ?? null };
}

export type QueryKind = "domain" | "url" | "network_id" | "property_id" | "credential_id";

/** A parsed query; `domain` is the lower-cased entity, property or issuer domain it is about. */
export type Query =
  | { input: string; kind: "domain" | "url" | "network_id"; domain: string }
  | { input: string; kind: "property_id"; domain: string; id: string }
  | { input: string; kind: "credential_id"; domain: string; id: string; credential: CredentialId };

export type QueryParse = { ok: true; query: Query } | { ok: false; message: string };

/** What a query may be, for error messages (docs/decisions.md#interfaces). */
export const QUERY_FORMS = "a domain (alice.example), an https:// URL, §:entity:{domain}, §:property:{domain} or @user@issuer[/path]";

/** Parses and classifies a query (docs/decisions.md#interfaces): trimmed, at most 512 characters. */
/**
 * Whether text is meant as an identifier (it starts like one: `§`, `@`, or a URL scheme), so a
 * mistake in it is reported rather than searched for (docs/decisions.md#search).
 */
export function looksLikeIdentifier(raw: string): boolean {
  const input = raw.trim();
  return input.startsWith(SECTION) || input.startsWith("@") || /^[a-z][a-z0-9+.-]*:\/\//i.test(input);
}

export function parseQuery(raw: string): QueryParse {
  const input = raw.trim();
  const fail = (why: string): QueryParse => ({ ok: false, message: `${why}; expected ${QUERY_FORMS}` });
  if (input === "") return fail("The query is empty");
  if (input.length > MAX_QUERY_LENGTH) return fail(`The query is longer than ${MAX_QUERY_LENGTH} characters`);

  if (input.startsWith(SECTION)) {
    const entity = parseNetworkId(input);
    if (entity) return { ok: true, query: { input, kind: "network_id", domain: entity.toLowerCase() } };
    const property = parsePropertyId(input);
    if (property) return { ok: true, query: { input, kind: "property_id", domain: property.toLowerCase(), id: input } };
    return fail(`"${input}" is not a valid network_id or property_id`);
  }
  if (input.startsWith("@")) {
    const credential = parseCredentialId(input);
    if (!credential) return fail(`"${input}" is not a valid credential_id`);
    return {
      ok: true,
      query: { input, kind: "credential_id", domain: credential.domain.toLowerCase(), id: input, credential },
    };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input)) {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      return fail(`"${input}" is not a valid URL`);
    }
    if (url.protocol !== "https:") return fail("Only https:// URLs can be looked up");
    if (url.port !== "") return fail("Only URLs on the default HTTPS port can be looked up");
    if (url.username !== "" || url.password !== "") return fail("A URL with credentials cannot be looked up");
    if (!isDomain(url.hostname)) return fail(`"${url.hostname}" is not a domain name`);
    return { ok: true, query: { input, kind: "url", domain: url.hostname.toLowerCase() } };
  }
  if (isDomain(input)) return { ok: true, query: { input, kind: "domain", domain: input.toLowerCase() } };
  return fail(`"${input}" is not a recognised query`);
}
