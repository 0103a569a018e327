/**
 * The resolver: wiring only (docs/architecture.md#the-resolver). It is built from its dependencies,
 * and each step lives in its own module: fetching a document with its fallback (documents.ts), the
 * parse memo (memo.ts), the claim checks within the budget (claims.ts), one entity (entity.ts), and
 * property and credential queries (queries.ts). Only `fetch` does I/O.
 */
import { createDocumentCache, type DocumentCache } from "../fetch/cache";
import type { Fetcher } from "../fetch/fetcher";
import { createHostLimiter } from "../fetch/host-limit";
import { DEFAULT_LIMITS, type Limits } from "../limits";
import { parseQuery, type Query } from "../protocol/ids";
import { SCHEMA_ID, type EntityResult, type SearchResponse } from "../result/record";
import { createClaimChecks } from "./claims";
import { createDocumentFetch, NotCached, type Load, type ResolveOptions } from "./documents";
import { createEntityResolution, type StagedEntity } from "./entity";
import { createParseMemo } from "./memo";
import { createQueries, publicQuery } from "./queries";

export type { CheckedClaim, ClaimSlot } from "./claims";
export type { ResolveOptions } from "./documents";
export type { StagedEntity } from "./entity";
export type { Limits } from "../limits";

export type ResolverDeps = {
  /** The guarded fetcher; tests hand in a fake. */
  fetch: Fetcher;
  /** @default a new {@link createDocumentCache} using `now` */
  cache?: DocumentCache;
  /** Clock, in ms. @default Date.now */
  now?: () => number;
  limits?: Partial<Limits>;
};

export type SearchOutcome = { ok: true; response: SearchResponse } | { ok: false; error: { code: "invalid_query"; message: string } };

export type Resolver = {
  /** Parses a query (docs/decisions.md#queries) and resolves it. A bad query is a value, not an exception. */
  search(input: string, options?: ResolveOptions): Promise<SearchOutcome>;
  /** Resolves an already parsed query. */
  resolve(query: Query, options?: ResolveOptions): Promise<SearchResponse>;
  /**
   * The answer to `query` from the cache alone, when every document it needs is there (fresh, or
   * stale within its day, which starts a background refresh as a lookup would); else null, and
   * nothing is fetched.
   */
  peek(query: Query): Promise<SearchResponse | null>;
  /** Resolves the entity of one domain with all its claims. */
  resolveEntity(domain: string, options?: ResolveOptions): Promise<EntityResult>;
  /** The same, returned as soon as the entity document is in, with one promise per claim (for streaming). */
  resolveEntityStaged(domain: string, options?: ResolveOptions): Promise<StagedEntity>;
};

export function createResolver(deps: ResolverDeps): Resolver {
  const now = deps.now ?? Date.now;
  const limits: Limits = { ...DEFAULT_LIMITS, ...deps.limits };
  const cache = deps.cache ?? createDocumentCache({ now });
  const perHost = createHostLimiter(limits.perHost);

  const load: Load = async (url, mode, opts) => {
    const fetchIt = () => perHost(new URL(url).host, () => deps.fetch(url, mode));
    if (!opts.cacheOnly) return cache.get(url, mode, fetchIt, opts);
    const hit = cache.peek(url, mode, fetchIt);
    if (!hit) throw new NotCached(url);
    return hit;
  };
  const memo = createParseMemo();
  const fetchDocument = createDocumentFetch(load, memo);
  const checks = createClaimChecks(fetchDocument, load, memo);
  const resolveEntityStaged = createEntityResolution(fetchDocument, checks, limits);
  const resolveEntity = async (domain: string, opts: ResolveOptions = {}) => (await resolveEntityStaged(domain, opts)).result;
  const queries = createQueries(fetchDocument, resolveEntity, limits);

  async function resolve(query: Query, opts: ResolveOptions = {}): Promise<SearchResponse> {
    if (query.kind === "property_id") return queries.resolvePropertyQuery(query, opts);
    if (query.kind === "credential_id") return queries.resolveCredentialQuery(query, opts);
    return { schema: SCHEMA_ID, query: publicQuery(query), results: [await resolveEntity(query.domain, opts)], problems: [] };
  }

  return {
    async search(input, opts) {
      const parsed = parseQuery(input);
      if (!parsed.ok) return { ok: false, error: { code: "invalid_query", message: parsed.message } };
      return { ok: true, response: await resolve(parsed.query, opts) };
    },
    resolve,
    async peek(query) {
      try {
        return await resolve(query, { cacheOnly: true });
      } catch (err) {
        if (err instanceof NotCached) return null;
        throw err;
      }
    },
    resolveEntity,
    resolveEntityStaged,
  };
}
