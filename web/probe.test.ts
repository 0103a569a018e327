/**
 * One question to the resolver per request (web/probe.ts, docs/architecture.md#one-question): the
 * page cache's version and admission share the probe of a page's query, so a cold page asks once.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Probe } from "ident-resolver";
import type { SearchResponse } from "ident-resolver";
import { createWindows, trafficSettings } from "ident-resolver/traffic";
import { admit, type AdmissionDeps } from "./admission";
import type { Admission } from "./decision";
import { bridge } from "./bridge";
import type { RequestContext } from "./decision";
import { createPageCache } from "./page-cache";
import { pageRequest } from "./page-request";
import { pageVersion } from "./page-version";
import { probeOnce } from "./probe";
import { classify } from "./routes";

// web/page-request.ts is for the server's pages only; here it runs in a test.
vi.mock("server-only", () => ({}));

const ANSWER = { schema: "answer", query: {}, results: [], problems: [] } as unknown as SearchResponse;
const QUERY = { input: "alice.example", kind: "domain", domain: "alice.example" } as const;

/** A resolver whose probe answers `probe` and counts each time it is asked. */
function resolverOf(probe: Probe) {
  const settings = trafficSettings({});
  const asked = { probes: 0 };
  const resolver = {
    probe: async () => {
      asked.probes++;
      return probe;
    },
    store: Promise.resolve(null),
    traffic: {
      settings,
      windows: createWindows(settings),
      outbound: { full: () => false, retryAfterS: 1 },
    },
    metrics: { refusals: { inc: () => {} } },
  };
  const deps = { resolver, clientOf: () => "203.0.113.7" } as unknown as AdmissionDeps;
  return { resolver, deps, asked };
}

const contextOf = (target: string): RequestContext => ({
  id: "test",
  route: classify("GET", target),
  client: "203.0.113.7",
  userAgent: null,
  nonce: "n",
  admission: null,
  delivery: null,
  head: { status: 200, headers: {} },
  probe: null,
  read: null,
});

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** The page cache in front of a page that is admitted as web/server.ts admits it, each request in its context; what admission said. */
async function served(probe: Probe, target: string) {
  const { resolver, deps, asked } = resolverOf(probe);
  const pages = createPageCache({ version: (route) => pageVersion(resolver, route), generation: () => 1 });
  const admitted: Admission[] = [];
  const server = createServer((req, res) => {
    const context = contextOf(req.url ?? "/");
    bridge().requests.run(context, () => {
      void pages.serve(req, res, context.route, () => {
        void admit(deps, QUERY, context.client, false).then((a) => {
          admitted.push(a);
          res.setHeader("content-security-policy", "script-src 'nonce-abc'");
          res.setHeader("content-type", "text/html");
          res.end("<p>page</p>");
        });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) =>
    request({ host: "127.0.0.1", port, path: target }, (res) => res.resume().on("end", resolve))
      .on("error", reject)
      .end(),
  );
  return { asked, admitted };
}

describe("one question to the resolver per request", () => {
  it("a cold page probes once: the page cache's version and admission share the answer", async () => {
    const { asked, admitted } = await served({ state: "cold" }, "/entity/alice.example");
    expect(admitted).toMatchObject([{ ok: true, starts: true }]);
    expect(asked.probes).toBe(1);
  });
  it("a page the cache can answer, rendered for the first time, probes once too (the check after it reads the version kept)", async () => {
    const { asked, admitted } = await served({ state: "cached", response: ANSWER, until: Infinity }, "/entity/alice.example");
    expect(admitted).toMatchObject([{ ok: true, starts: false, cached: ANSWER }]);
    expect(asked.probes).toBe(1);
  });
  it("admission takes the answer: what asks after it in the same request asks afresh", async () => {
    const { resolver, deps, asked } = resolverOf({ state: "cold" });
    await bridge().requests.run(contextOf("/entity/alice.example"), async () => {
      await probeOnce(resolver, QUERY);
      await admit(deps, QUERY, "203.0.113.7", false);
      await probeOnce(resolver, QUERY);
    });
    expect(asked.probes).toBe(2);
  });
  it("another query in the same request, or no request at all, is asked on its own", async () => {
    const { resolver, asked } = resolverOf({ state: "cold" });
    await bridge().requests.run(contextOf("/entity/alice.example"), async () => {
      await probeOnce(resolver, QUERY);
      await probeOnce(resolver, { input: "bob.example", kind: "domain", domain: "bob.example" });
    });
    await probeOnce(resolver, QUERY);
    await probeOnce(resolver, QUERY);
    expect(asked.probes).toBe(4);
  });
  it("the layout, the metadata and the page read their request's decision through one call, worked out once", async () => {
    const context = contextOf("/entity/alice.example");
    context.admission = { ok: true, refresh: { asked: false, granted: false }, cached: ANSWER, client: "203.0.113.7", starts: false };
    let deliveries = 0;
    Object.defineProperty(context, "delivery", {
      get: () => {
        deliveries++;
        return Promise.resolve({ mode: "whole", response: ANSWER });
      },
    });
    const reads = await bridge().requests.run(context, () => Promise.all([pageRequest(), pageRequest(), pageRequest()]));
    expect(reads[0]).toBe(reads[2]);
    expect(reads[0]?.delivery).toEqual({ mode: "whole", response: ANSWER });
    expect(deliveries).toBeLessThanOrEqual(2);
  });
});
