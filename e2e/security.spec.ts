import { expect, test } from "./helpers/test";

test("every page has a CSP with a fresh nonce per request, and the page still works", async ({ page }) => {
  const cspErrors: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
  });
  const nonces: string[] = [];
  for (const path of ["/", "/search?q=alice.example", "/entity/acme.example"]) {
    const response = await page.goto(path);
    const headers = response?.headers() ?? {};
    const csp = headers["content-security-policy"] ?? "";
    expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
    for (const part of ["object-src 'none'", "base-uri 'self'", "frame-ancestors 'none'"]) expect(csp).toContain(part);
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
    nonces.push(/'nonce-([^']+)'/.exec(csp)?.[1] ?? "");
  }
  expect(new Set(nonces).size).toBe(3);
  // Under the CSP, a link of the home page leads to the entity page (a plain link: read pages ship no runtime, web/script-free.ts).
  await page.goto("/");
  await page.getByRole("link", { name: "alice.example" }).click();
  await expect(page.getByTestId("entity-header")).toBeVisible();
  expect(cspErrors).toEqual([]);
});

test("the API answers as docs/decisions.md#interfaces says, with sensible caching, and refresh is rate-limited per client", async ({
  request,
}) => {
  const ok = await request.get("/api/resolve?q=alice.example");
  expect(ok.status()).toBe(200);
  expect(ok.headers()["cache-control"]).toContain("max-age=60");
  expect(ok.headers()["content-type"]).toBe("application/json");
  expect((await ok.json()).schema).toBe("ident-resolver/search@1");
  // Answered without Next by the production server (web/api.ts), with the headers a page has.
  const headers = ok.headers();
  expect(headers["content-security-policy"]).toContain("default-src 'self'");
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
  expect(headers["x-frame-options"]).toBe("DENY");
  expect(headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  expect(headers.vary).toBe("Accept-Encoding"); // Next would add "Vary: rsc, …"
  const head = await request.head("/api/resolve?q=alice.example");
  expect(head.status()).toBe(200);
  expect(head.headers()["content-type"]).toBe("application/json");
  expect(await head.body()).toHaveLength(0);
  // Other methods, and paths beside it: 405 and 404 (web/api.ts), never a 500.
  expect((await request.post("/api/resolve?q=alice.example")).status()).toBe(405);
  expect((await request.get("/api/resolve/extra?q=alice.example")).status()).toBe(404);
  const bad = await request.get("/api/resolve?q=not%20a%20query");
  expect(bad.status()).toBe(400);
  expect((await bad.json()).error.code).toBe("invalid_query");
  const statuses: number[] = [];
  let last = null;
  for (let i = 0; i < 7; i++) {
    // A spoofed X-Forwarded-For does not buy a fresh allowance: the rightmost hop counts.
    last = await request.get("/api/resolve?q=minimal.test&refresh=1", { headers: { "x-forwarded-for": `10.0.0.${i}` } });
    statuses.push(last.status());
  }
  expect(statuses.slice(0, 5).every((s) => s === 200)).toBe(true);
  expect(statuses.at(-1)).toBe(429);
  // docs/architecture.md#traffic: the refusal names its limit, and when to ask again.
  if (!last) throw new Error("no request was made");
  expect(last.headers()["retry-after"]).toMatch(/^\d+$/);
  expect((await last.json()).error).toMatchObject({
    code: "rate_limited",
    refused: "refreshes",
    message: expect.stringMatching(/^You have asked for the 5 fresh checks a minute one client may/),
  });
});

test("a warm page served from the page cache carries a fresh nonce each time, and still works", async ({ page, request }) => {
  // sharer.test is asked for by this test only, so its documents stay fresh (3 s here) throughout.
  await request.get("/api/resolve?q=sharer.test");
  const copies = [];
  for (let i = 0; i < 3; i++) {
    const r = await request.get("/entity/sharer.test");
    const nonce = /'nonce-([^']+)'/.exec(r.headers()["content-security-policy"] ?? "")?.[1] ?? "";
    const body = await r.text();
    copies.push({ from: r.headers()["x-ident-page-cache"], nonce, body });
    // Every nonce attribute in the page is this response's.
    const inBody = [...body.matchAll(/nonce="([^"]+)"/g)].map((m) => m[1]);
    // A read page ships no framework script (web/script-free.ts): its own inline script remains.
    expect(inBody.length).toBeGreaterThanOrEqual(1);
    expect(new Set(inBody)).toEqual(new Set([nonce]));
  }
  expect(copies.map((c) => c.from)).toEqual(["miss", "hit", "hit"]);
  expect(new Set(copies.map((c) => c.nonce)).size).toBe(3);
  expect(copies[2]!.body.split(copies[2]!.nonce).join("N")).toBe(copies[1]!.body.split(copies[1]!.nonce).join("N"));

  const cspErrors: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
  });
  const response = await page.goto("/entity/sharer.test");
  expect(response?.headers()["x-ident-page-cache"]).toBe("hit");
  await expect(page.getByTestId("entity-header")).toBeVisible();
  // The page's inline script ran under the new nonce: it pins React's reveal clock
  // (components/reveal-at-once.tsx), which reads as long ago.
  expect(await page.evaluate(() => (window as unknown as { $RT: number }).$RT)).toBe(-1e9);
  // And no script of the framework was sent to be blocked or run (web/script-free.ts).
  expect(await page.locator('script[src^="/_next/"]').count()).toBe(0);
  expect(cspErrors).toEqual([]);
});

test("the home page comes from the page cache after its first render, with a fresh nonce, and its form works", async ({
  page,
  request,
}) => {
  const first = await request.get("/");
  const again = await request.get("/");
  expect(first.status()).toBe(200);
  expect(again.headers()["x-ident-page-cache"]).toBe("hit");
  expect(again.headers()["content-security-policy"]).not.toBe(first.headers()["content-security-policy"]);
  // A query string the page does not read is the same page (docs/decisions.md#page-cache), not a copy of its own.
  expect((await request.get("/?x=1")).headers()["x-ident-page-cache"]).toBe("hit");

  await page.goto("/");
  await page.locator("#q").fill("alice.example");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/search\?q=alice\.example/);
});
