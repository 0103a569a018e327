/**
 * One question to the resolver per request (docs/architecture.md#one-question): what a lookup of the
 * request's query would cost now, from the cache alone (`probe`, which fetches nothing). A cold page
 * used to ask it twice before any fetch: the page cache, for the page's version, then admission.
 * Now the first asker keeps the answer in the request's context and admission takes it from there,
 * so a page asks once however far it goes. Outside a request (a test, the crawler) every call asks.
 */
import type { Probe } from "ident-resolver";
import type { Query } from "ident-resolver";
import type { ConfiguredResolver } from "ident-resolver/setup";
import { requestContext } from "./request-context";

const keyOf = (query: Query) => JSON.stringify(query);

/** The request's probe of `query`: the one already asked in this request, else asked now and kept for admission. */
export function probeOnce(resolver: Pick<ConfiguredResolver, "probe">, query: Query): Promise<Probe> {
  const context = requestContext();
  const key = keyOf(query);
  if (context?.probe?.key === key) return context.probe.answer;
  const answer = resolver.probe(query);
  if (context) context.probe = { key, answer };
  return answer;
}

/**
 * The request's probe of `query` for admission, which takes it: the one the page cache asked, else
 * asked now. Taken once: what runs after admission (the page cache's check that nothing changed
 * while the page rendered) asks afresh.
 */
export function takeProbe(resolver: Pick<ConfiguredResolver, "probe">, query: Query): Promise<Probe> {
  const answer = probeOnce(resolver, query);
  const context = requestContext();
  if (context) context.probe = null;
  return answer;
}
