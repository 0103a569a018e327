/** The sample network's redirects that leave bounds (docs/decisions.md#fetching), each one a fetcher must refuse: its site, and how. */
export const REDIRECTS_OUT_OF_BOUNDS: [domain: string, how: string][] = [
  ["redirect-http.test", "to http:"],
  ["redirect-private.test", "to a loopback IP literal"],
  ["redirect-port.test", "to another port"],
  ["redirect-chain.test", "4 hops"],
];
