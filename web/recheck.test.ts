/**
 * `POST /recheck` (web/recheck.ts, docs/publishing.md#re-check-now), answered by the server without
 * Next: only from this site's pages, a form naming a domain, rate-limited like `?refresh=1`, and back
 * to the entity's page (303) saying what happened.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createWindows, trafficSettings } from "ident-resolver/traffic";
import type { ResolveOptions } from "ident-resolver";
import { serveRecheck, type RecheckDeps } from "./recheck";

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function start(refreshes = 10) {
  const settings = trafficSettings({ refreshes });
  const asked: string[] = [];
  const deps = {
    resolver: {
      probe: async () => ({ state: "cold" }),
      traffic: { settings, windows: createWindows(settings), outbound: { full: () => false, retryAfterS: 1 } },
      metrics: { refusals: { inc: () => {} } },
      resolveEntity: async (domain: string, options?: ResolveOptions) => {
        asked.push(`${domain} refresh=${String(options?.refresh)}`);
        return { domain };
      },
    },
    clientOf: () => "203.0.113.9",
  } as unknown as RecheckDeps;
  const server = createServer((req, res) => void serveRecheck(deps, req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  const post = (form: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; location: string | undefined; rateLimit: string | string[] | undefined; body: string }>(
      (resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port,
            method: "POST",
            path: "/recheck",
            headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
          },
          (res) => {
            let body = "";
            res.on("data", (c: Buffer) => (body += c.toString()));
            res.on("end", () =>
              resolve({ status: res.statusCode ?? 0, location: res.headers.location, rateLimit: res.headers.ratelimit, body }),
            );
          },
        );
        req.on("error", reject);
        req.end(form);
      },
    );
  return { post, asked };
}

describe("POST /recheck", () => {
  it("fetches the entity again and goes back to its page saying when", async () => {
    const { post, asked } = await start();
    const done = await post("domain=Alice.Example", { "sec-fetch-site": "same-origin" });
    expect(done.status).toBe(303);
    expect(done.location).toMatch(/^\/entity\/alice\.example\?rechecked=\d{4}-/);
    expect(asked).toEqual(["alice.example refresh=true"]);
  });
  it("is refused from another site (Sec-Fetch-Site, else Origin against Host), and fetches nothing", async () => {
    const { post, asked } = await start();
    expect((await post("domain=alice.example", { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await post("domain=alice.example", { "sec-fetch-site": "same-site" })).status).toBe(403);
    expect((await post("domain=alice.example", { origin: "https://evil.example" })).status).toBe(403);
    expect((await post("domain=alice.example", { origin: "null" })).status).toBe(403);
    expect(asked).toEqual([]);
  });
  it("a form that names no domain is 400", async () => {
    const { post } = await start();
    expect((await post("domain=not+a+domain")).status).toBe(400);
    expect((await post("other=alice.example")).status).toBe(400);
  });
  it("past the client's fresh checks, goes back to the page naming the limit and when to try again", async () => {
    const { post, asked } = await start(1);
    expect((await post("domain=alice.example")).status).toBe(303);
    const refused = await post("domain=alice.example");
    expect(refused.status).toBe(303);
    expect(refused.location).toMatch(/^\/entity\/alice\.example\?recheck=refreshes&retry=\d+$/);
    expect(refused.rateLimit).toMatch(/"cold";r=\d+;t=\d+/);
    expect(asked).toHaveLength(1);
  });
});
