/**
 * The resolver: wiring only (docs/architecture.md#the-resolver). It is built from its dependencies,
 * and each step lives in its own module: fetching a document with its fallback (documents.ts), the
 * parse memo (memo.ts), the claim checks within the budget (claims.ts), one entity (entity.ts), and
 * property and credential queries (queries.ts). Only `fetch` does I/O.
 */
import { createDocumentCache, type DocumentCache } from "../fetch/cache.ts";
import type { Fetcher, FetchMode } from "../fetch/outcome.ts";
import { DEFAULT_LIMITS, type Limits } from "../limits.ts";
import type { Priority } from "../traffic/outbound.ts";
import { refusedAt } from "../traffic/limits.ts";
import { isRefusal, type FetchRefusal } from "../traffic/refusal.ts";
import { warning } from "../documents/problem.ts";
import { extend } from "../objects.ts";
import { parseQuery, type Query } from "../protocol/ids.ts";
import { SCHEMA_ID, type Claim, type EntityResult, type SearchResponse } from "../result/record.ts";
import { createClaimChecks } from "./claims.ts";
import { createDocumentFetch, newWork, NotCached, type Load, type ResolveOptions } from "./documents.ts";
import { createEntityResolution, type StagedEntity } from "./entity.ts";
import { createParseMemo } from "./memo.ts";
import { createQueries, publicQuery } from "./queries.ts";
import { RESOLVER } from "../version.ts";

export type { CheckedClaim, ClaimSlot } from "./claims.ts";
export type { QueryWork, ResolveOptions } from "./documents.ts";
export { newWork } from "./documents.ts";
export type { StagedEntity } from "./entity.ts";
export type { Limits } from "../limits.ts";

export type ResolverDeps = {
  /** The guarded fetcher; tests hand in a fake. */
  fetch: Fetcher;
  /** @default a new {@link createDocumentCache} using `now` */
  cache?: DocumentCache;
  /** Clock, in ms. @default Date.now */
  now?: () => number;
  limits?: Partial<Limits>;
  /**
   * Called with every entity result a lookup completes (not a cache-only answer): the index records
   * it and hands it back with what it remembers (docs/decisions.md#the-index). `client` is whose lookup
   * it was, for the index's fair turns (docs/architecture.md#fair-queues). Must not throw.
   */
  annotate?: (result: EntityResult, client?: string) => Promise<EntityResult>;
  /**
   * For an entity whose claims arrive one by one: how the index will annotate each claim of a check
   * made at `fetchedAt` (ISO), so a streamed card says what the whole result will. Must not throw.
   */
  preview?: (domain: string, fetchedAt: string) => Promise<((kind: ClaimListKind, claim: Claim, index: number) => Claim) | null>;
};

type ClaimListKind = "properties" | "credentials" | "connections";

/** What a lookup would cost now: answered from the cache, joining a fetch already running, or starting one. */
export type Probe = { state: "cached"; response: SearchResponse; until: number } | { state: "joining" } | { state: "cold" };

export type SearchOutcome =
  | { ok: true; response: SearchResponse }
  | { ok: false; error: { code: "invalid_query"; message: string } }
  | { ok: false; refused: FetchRefusal };

export type Resolver = {
  /** Parses a query (docs/decisions.md#queries) and resolves it. A bad query and a refusal are values, not exceptions. */
  search(input: string, options?: ResolveOptions): Promise<SearchOutcome>;
  /**
   * Resolves an already parsed query; the refusal when the query's own document could not be fetched
   * now (docs/architecture.md#traffic). A claim that could not be is `not_checked` in the response.
   */
  resolve(query: Query, options?: ResolveOptions): Promise<SearchResponse | FetchRefusal>;
  /**
   * The answer to `query` from the cache alone, when every document it needs is there (fresh, or
   * stale within its day, which starts a background refresh as a lookup would); else null, and
   * nothing is fetched.
   */
  peek(query: Query): Promise<SearchResponse | null>;
  /**
   * What a lookup of `query` would cost now, from the cache alone: its answer when every document is
   * there, else whether the first missing one is already being fetched (docs/decisions.md#outbound-work).
   */
  probe(query: Query): Promise<Probe>;
  /**
   * Moves whenever a cached document is kept, replaced or dropped: a probe's answer stands while this
   * reads the same and the clock is before the probe's `until` (the page cache's version, web/page-cache.ts).
   */
  generation(): number;
  /** Resolves the entity of one domain with all its claims; or the refusal of its document. */
  resolveEntity(domain: string, options?: ResolveOptions): Promise<EntityResult | FetchRefusal>;
  /** The same, returned as soon as the entity document is in, with one promise per claim (for streaming). */
  resolveEntityStaged(domain: string, options?: ResolveOptions): Promise<StagedEntity | FetchRefusal>;
};

/** What a resolver holds: its dependencies, its limits and cache, and the steps built over them. */
type ResolverState = {
  deps: ResolverDeps;
  limits: Limits;
  cache: DocumentCache;
  /** One entity, staged (entity.ts). */
  staged: ReturnType<typeof createEntityResolution>;
  /** `deps.annotate`, as it was when the resolver was made. */
  annotate: ResolverDeps["annotate"];
  queries: ReturnType<typeof createQueries>;
};

/** What reading a document needs of the resolver: its fetcher (in `deps`), its limits and its cache. */
type Reads = Pick<ResolverState, "deps" | "limits" | "cache">;

export function createResolverCore(deps: ResolverDeps): Resolver {
  const now = deps.now ?? Date.now;
  const limits: Limits = Object.assign({}, DEFAULT_LIMITS, deps.limits);
  const cache = deps.cache ?? createDocumentCache({ now });
  const reads: Reads = { deps, limits, cache };
  const load: Load = (url, mode, opts) => loadDocument(reads, url, mode, opts);
  const memo = createParseMemo();
  const fetchDocument = createDocumentFetch(load, memo);
  const checks = createClaimChecks(fetchDocument, load, memo, (url, mode, opts) => refusedNow(reads, url, mode, opts));
  const staged = createEntityResolution(fetchDocument, checks, limits);
  const state: ResolverState = {
    deps,
    limits,
    cache,
    staged,
    annotate: deps.annotate,
    queries: createQueries(fetchDocument, (domain, opts) => resolveEntity(state, domain, opts), limits),
  };
  return {
    search: (input, opts) => search(state, input, opts),
    resolve: (query, options) => resolve(state, query, options),
    peek: async (query) => {
      const probed = await probe(state, query);
      return probed.state === "cached" ? probed.response : null;
    },
    probe: (query) => probe(state, query),
    generation: () => cache.generation,
    resolveEntity: (domain, opts) => resolveEntity(state, domain, withWork(opts)),
    resolveEntityStaged: (domain, opts) => resolveEntityStaged(state, domain, withWork(opts)),
  };
}

/**
 * Reads a document through the cache, which calls `start` only when it must start a fetch; counts
 * the query's fetches against its budget and notes what the cache answered in the query's work.
 */
async function loadDocument({ deps, limits, cache }: Reads, url: string, mode: FetchMode, opts: ResolveOptions): ReturnType<Load> {
  const work = opts.work ?? newWork();
  // Runs only when the cache must start a fetch: joining one in flight or reading the cache is free.
  const start = (priority: Priority) => {
    if (work.fetches >= limits.maxFetchesPerQuery) return Promise.resolve(budgetSpent(limits));
    work.fetches++;
    // A stale document's refresh started by a read that names no client (a probe) is background work's.
    const client = opts.client ?? (opts.background || priority === "background" ? "background" : "local");
    const fetchOptions = { priority: opts.background ? ("background" as const) : priority, client };
    return deps.fetch(url, mode, fetchOptions);
  };
  const got = opts.cacheOnly ? await cache.peek(url, mode, start) : await cache.get(url, mode, start, opts);
  if (!got) throw new NotCached(url, await cache.loading(url, mode));
  if (isRefusal(got)) return got;
  work.until = Math.min(work.until, got.until);
  if (got.refused) {
    work.refused.push(got.refused.refused);
    work.knownServed.push(got.refused);
  }
  return got;
}

/** The refusal of a fetch past the query's budget (docs/architecture.md#traffic: `fetchesPerQuery`). */
const budgetSpent = (limits: Limits) =>
  refusedAt("fetchesPerQuery", `this lookup has already started the ${limits.maxFetchesPerQuery} fetches one lookup may`, 0);

/**
 * The refusal a read of `url` would surely meet now: the query's fetches all started and nothing
 * cached to read instead. Found without a promise, so that the thousands of claims past a big
 * query's budget cost no chain of them each (docs/decisions.md#outbound-work).
 */
const refusedNow = ({ limits, cache }: Reads, url: string, mode: FetchMode, opts: ResolveOptions): FetchRefusal | null =>
  !opts.cacheOnly && opts.work !== undefined && opts.work.fetches >= limits.maxFetchesPerQuery && !cache.mayHold(url, mode)
    ? budgetSpent(limits)
    : null;

/** With `slots`, each claim's promise is annotated as it settles (for a page that streams); without, only the whole result. */
async function annotated(state: ResolverState, domain: string, opts: ResolveOptions, slots: boolean): Promise<StagedEntity | FetchRefusal> {
  const entity = await state.staged(domain, opts);
  const annotate = state.annotate;
  if (isRefusal(entity) || !annotate || opts.cacheOnly) return entity;
  const result = entity.result.then((whole) => annotate(whole, opts.client));
  // An entity claiming nothing has no claim to annotate: the index is not asked (a cold page's read).
  const claims = entity.properties.length + entity.credentials.length + entity.connections.length;
  if (!slots || !state.deps.preview || entity.entity.status !== "accepted" || claims === 0) return extend(entity, { result });
  // Each claim as it settles, annotated as the whole result will be (docs/decisions.md#the-index).
  const preview = state.deps.preview(entity.entity.domain, entity.cache.fetched_at).catch(() => null);
  const previewed = (kind: ClaimListKind) =>
    entity[kind].map((slot, i) => ({
      id: slot.id,
      claimed: slot.claimed,
      result: slot.result.then(async (checked) => {
        const annotateClaim = await preview;
        return annotateClaim ? { claim: annotateClaim(kind, checked.claim, i), stale: checked.stale } : checked;
      }),
    }));
  return extend(entity, {
    properties: previewed("properties"),
    credentials: previewed("credentials"),
    connections: previewed("connections"),
    result,
  });
}

/** The options with a budget of their own: each query gets one, unless the caller hands one in to read afterwards. */
const withWork = (opts: ResolveOptions = {}): ResolveOptions => (opts.work ? opts : extend(opts, { work: newWork() }));

/** One entity, staged, each claim annotated as it settles. */
const resolveEntityStaged = (state: ResolverState, domain: string, opts: ResolveOptions = {}) => annotated(state, domain, opts, true);

/**
 * One entity, whole, annotated. No preview: nobody reads the claims one by one, and it cost a read
 * of the index and a verdict per claim.
 */
async function resolveEntity(state: ResolverState, domain: string, opts: ResolveOptions = {}): Promise<EntityResult | FetchRefusal> {
  const entity = await annotated(state, domain, opts, false);
  return isRefusal(entity) ? entity : entity.result;
}

/** A parsed query, by its kind: a property or credential query, or one entity. */
async function resolveQuery(state: ResolverState, query: Query, opts: ResolveOptions): Promise<SearchResponse | FetchRefusal> {
  if (query.kind === "property_id") return state.queries.resolvePropertyQuery(query, opts);
  if (query.kind === "credential_id") return state.queries.resolveCredentialQuery(query, opts);
  const result = await resolveEntity(state, query.domain, opts);
  return isRefusal(result) ? result : { schema: SCHEMA_ID, query: publicQuery(query), results: [result], problems: [] };
}

/** {@link Resolver.resolve}: the query with a budget of its own, a document answered as last fetched said so. */
async function resolve(state: ResolverState, query: Query, options: ResolveOptions = {}): Promise<SearchResponse | FetchRefusal> {
  const opts = withWork(options);
  const resolved = await resolveQuery(state, query, opts);
  if (isRefusal(resolved)) return resolved;
  // docs/library.md#versions: every record names the package and version that made it.
  const response = extend(resolved, { resolver: RESOLVER });
  const servedStale = opts.work?.knownServed[0];
  if (!servedStale) return response;
  // docs/architecture.md#traffic: a document answered as last fetched, because its fetch was refused, is said so.
  const said = warning("not_fetched_again", `Answered as last fetched, not fetched again now: ${servedStale.message}`);
  return extend(response, { problems: [...response.problems, said] });
}

/** {@link Resolver.probe}: a cache-only resolution, or why it could not be one. */
async function probe(state: ResolverState, query: Query): Promise<Probe> {
  const work = newWork();
  try {
    const response = await resolve(state, query, { cacheOnly: true, work });
    // A cache-only resolution starts no fetch, so nothing refuses it; were one to, it would be cold.
    if (isRefusal(response)) return { state: "cold" };
    return { state: "cached", response, until: work.until };
  } catch (err) {
    if (err instanceof NotCached) return { state: err.loading ? "joining" : "cold" };
    throw err;
  }
}

/** {@link Resolver.search}: parses the query and resolves it; a bad query and a refusal are values. */
async function search(state: ResolverState, input: string, opts?: ResolveOptions): Promise<SearchOutcome> {
  const parsed = parseQuery(input);
  if (!parsed.ok) return { ok: false, error: { code: "invalid_query", message: parsed.message } };
  const response = await resolve(state, parsed.query, opts);
  return isRefusal(response) ? { ok: false, refused: response } : { ok: true, response };
}
