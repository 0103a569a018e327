import { afterAll, beforeAll } from "vitest";
import { parseConnectTo } from "ident-resolver/node";
import { createFetcher, type FetcherOptions } from "ident-resolver/node";
import { createResolverCore, type Limits } from "ident-resolver";
import { startSampleNetwork, type SampleNetwork, type SampleNetworkOptions } from "../network/server";

/**
 * Starts the sample network for a test file and builds real fetchers and resolvers against it:
 * the guarded fetcher over real HTTPS, the network's CA trusted, every host sent to it by
 * IDENT_CONNECT_TO exactly as in production.
 */
export function useSampleNetwork(options: SampleNetworkOptions = {}) {
  const closers: (() => Promise<void>)[] = [];
  const ctx = {
    net: undefined as unknown as SampleNetwork,
    /** A real fetcher; `connectTo: false` leaves routing to the injected `resolve` and the guard. */
    fetcher(extra: Omit<FetcherOptions, "connectTo"> & { connectTo?: FetcherOptions["connectTo"] | false } = {}) {
      const parsed = parseConnectTo(ctx.net.connectTo);
      if (!parsed.ok) throw new Error(parsed.message);
      const { connectTo, ...rest } = extra;
      const fetcher = createFetcher({
        ca: [ctx.net.caPem],
        userAgent: "ident-resolver/test",
        ...rest,
        connectTo: connectTo === false ? [] : (connectTo ?? parsed.entries),
      });
      closers.push(() => fetcher.close());
      return fetcher;
    },
    /** A fresh resolver (fresh cache) over a real fetcher. */
    resolver(opts: { limits?: Partial<Limits>; fetcher?: FetcherOptions } = {}) {
      return createResolverCore({ fetch: ctx.fetcher(opts.fetcher), ...(opts.limits ? { limits: opts.limits } : {}) });
    },
  };
  beforeAll(async () => {
    ctx.net = await startSampleNetwork(options);
  });
  afterAll(async () => {
    await Promise.all(closers.map((c) => c()));
    await ctx.net?.close();
  });
  return ctx;
}
