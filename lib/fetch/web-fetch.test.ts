import { describe, expect, it } from "vitest";
import { fetcherFromFetch, type WebFetch } from "./web-fetch.ts";

/** A fetch that answers from a table of URLs, and remembers what it was asked. */
function fake(routes: Record<string, () => Response | Promise<Response>>) {
  const asked: { url: string; init: RequestInit }[] = [];
  const fetchFn: WebFetch = async (url, init) => {
    asked.push({ url, init });
    const route = routes[url];
    if (!route) throw new TypeError("fetch failed", { cause: new Error("getaddrinfo ENOTFOUND") });
    return route();
  };
  return { fetchFn, asked };
}

const redirect =
  (to: string, status = 302) =>
  () =>
    new Response(null, { status, headers: { location: to } });

describe("fetcherFromFetch: the protocol's rules over a given fetch (docs/library.md#what-you-can-bring)", () => {
  it("answers a document found, with its status, type, bytes and the headers asked", async () => {
    const { fetchFn, asked } = fake({
      "https://a.example/ident.json": () => new Response('{"a":1}', { headers: { "content-type": "application/json" } }),
    });
    const outcome = await fetcherFromFetch(fetchFn, { userAgent: "ua/1" })("https://a.example/ident.json", "json");
    expect(outcome).toMatchObject({
      ok: true,
      status: "found",
      httpStatus: 200,
      body: '{"a":1}',
      bytes: 7,
      contentType: "application/json",
    });
    expect(asked[0]?.init).toMatchObject({
      method: "GET",
      redirect: "manual",
      credentials: "omit",
      referrerPolicy: "no-referrer",
      headers: { accept: "application/json, */*;q=0.1", "user-agent": "ua/1" },
    });
  });
  it("never asks for what is not HTTPS on 443 to a domain", async () => {
    const { fetchFn, asked } = fake({});
    const fetcher = fetcherFromFetch(fetchFn);
    for (const url of ["http://a.example/", "https://a.example:8443/", "https://127.0.0.1/", "https://u:p@a.example/", "not a url"]) {
      expect(await fetcher(url, "json"), url).toMatchObject({ ok: false, status: "blocked" });
    }
    expect(asked).toEqual([]);
  });
  it("follows a redirect by hand, checking each hop, and stops after 3", async () => {
    const { fetchFn } = fake({
      "https://a.example/x": redirect("https://b.example/x"),
      "https://b.example/x": () => new Response("found"),
      "https://c.example/x": redirect("http://d.example/x"),
      "https://l.example/0": redirect("/1"),
      "https://l.example/1": redirect("/2"),
      "https://l.example/2": redirect("/3"),
      "https://l.example/3": redirect("/4"),
    });
    const fetcher = fetcherFromFetch(fetchFn);
    expect(await fetcher("https://a.example/x", "json")).toMatchObject({ ok: true, body: "found", finalUrl: "https://b.example/x" });
    expect(await fetcher("https://c.example/x", "json")).toMatchObject({
      ok: false,
      status: "blocked",
      message: expect.stringContaining("http: is not https:"),
    });
    expect(await fetcher("https://l.example/0", "json")).toMatchObject({ ok: false, status: "blocked", message: "more than 3 redirects" });
  });
  it("checks where a redirect the runtime followed itself ended (a browser's)", async () => {
    const followed = new Response("x");
    Object.defineProperty(followed, "redirected", { value: true });
    Object.defineProperty(followed, "url", { value: "https://10.0.0.1/x" });
    const { fetchFn } = fake({ "https://a.example/x": () => followed });
    expect(await fetcherFromFetch(fetchFn)("https://a.example/x", "json")).toMatchObject({ ok: false, status: "blocked" });
  });
  it("answers another status as not found, and a failed connection as unreachable", async () => {
    const { fetchFn } = fake({ "https://a.example/x": () => new Response("no", { status: 404 }) });
    const fetcher = fetcherFromFetch(fetchFn);
    expect(await fetcher("https://a.example/x", "json")).toMatchObject({ ok: false, status: "not_found", httpStatus: 404 });
    expect(await fetcher("https://gone.example/x", "json")).toMatchObject({
      ok: false,
      status: "unreachable",
      detail: expect.stringContaining("ENOTFOUND"),
    });
  });
  it("stops reading a body past the cap, as it arrives", async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const { fetchFn } = fake({ "https://a.example/x": () => new Response(endless) });
    const outcome = await fetcherFromFetch(fetchFn)("https://a.example/x", "json");
    expect(outcome).toMatchObject({ ok: false, status: "too_large" });
    expect(pulled).toBeLessThan(40);
  });
  it("gives up at the deadline, the body included, and aborts the fetch", async () => {
    let signal: AbortSignal | undefined;
    const slow = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode("{")) });
    const fetchFn: WebFetch = async (_url, init) => {
      signal = init.signal ?? undefined;
      return new Response(slow);
    };
    const outcome = await fetcherFromFetch(fetchFn, { timeoutMs: 50 })("https://a.example/x", "json");
    expect(outcome).toMatchObject({ ok: false, status: "timeout", message: "no complete answer within 50 ms" });
    expect(signal?.aborted).toBe(true);
  });
});
