import { describe, expect, it, vi } from "vitest";
import { answered } from "../../test/helpers/answered.ts";
import { refusal, type FetchRefusal } from "../traffic/refusal.ts";
import { createDocumentCache, type CachedOutcome } from "./cache.ts";
import type { FetchOutcome } from "./outcome.ts";

const found = (body: string): FetchOutcome => ({
  ok: true,
  status: "found",
  url: "https://a.example/ident.json",
  finalUrl: "https://a.example/ident.json",
  httpStatus: 200,
  contentType: "application/json",
  body,
  bytes: body.length,
  ms: 1,
});
const failed = (status: "not_found" | "timeout"): FetchOutcome => ({
  ok: false,
  status,
  url: "https://a.example/ident.json",
  finalUrl: "https://a.example/ident.json",
  httpStatus: status === "not_found" ? 404 : null,
  contentType: null,
  message: status,
  ms: 1,
});
const H = 3600_000;

function setup() {
  let t = 1_000_000;
  const clock = { now: () => t, advance: (ms: number) => (t += ms) };
  const cache = createDocumentCache({ now: clock.now });
  return { cache, clock };
}
const URL_ = "https://a.example/ident.json";

describe("document cache (docs/decisions.md#caching)", () => {
  it("serves a found document fresh for 1 h without fetching", async () => {
    const { cache, clock } = setup();
    const load = vi.fn(async () => found("v1"));
    answered(await cache.get(URL_, "json", load));
    clock.advance(H - 1);
    const hit = answered(await cache.get(URL_, "json", load));
    expect(hit).toMatchObject({ stale: false, outcome: { body: "v1" } });
    expect(load).toHaveBeenCalledTimes(1);
  });
  it("then serves it stale while exactly one background refresh runs", async () => {
    const { cache, clock } = setup();
    let release: (o: FetchOutcome) => void = () => undefined;
    const load = vi.fn(async () => found("v1"));
    answered(await cache.get(URL_, "json", load));
    clock.advance(H + 1);
    const slow = vi.fn(() => new Promise<FetchOutcome>((r) => (release = r)));
    const [a, b] = (await Promise.all([cache.get(URL_, "json", slow), cache.get(URL_, "json", slow)])).map(answered) as [
      CachedOutcome,
      CachedOutcome,
    ];
    expect([a.stale, b.stale]).toEqual([true, true]);
    expect(a.outcome.ok && a.outcome.body).toBe("v1");
    expect(slow).toHaveBeenCalledTimes(1);
    release(found("v2"));
    await vi.waitFor(async () => expect(answered(await cache.get(URL_, "json", slow)).outcome).toMatchObject({ body: "v2" }));
    expect(answered(await cache.get(URL_, "json", slow)).stale).toBe(false);
  });
  it("re-verification (revalidate) fetches a document that is no longer fresh rather than answer it stale; a fresh one is answered", async () => {
    const { cache, clock } = setup();
    answered(await cache.get(URL_, "json", async () => found("v1")));
    const again = vi.fn(async () => found("v2"));
    expect(answered(await cache.get(URL_, "json", again, { revalidate: true })).outcome).toMatchObject({ body: "v1" });
    expect(again).not.toHaveBeenCalled();
    clock.advance(H + 1);
    const got = answered(await cache.get(URL_, "json", again, { revalidate: true }));
    expect(got).toMatchObject({ stale: false, outcome: { body: "v2" } });
    expect(again).toHaveBeenCalledTimes(1);
  });
  it("never uses a document past 24 h (docs/protocol.md#serving staleness bound)", async () => {
    const { cache, clock } = setup();
    answered(await cache.get(URL_, "json", async () => found("v1")));
    clock.advance(24 * H);
    const load = vi.fn(async () => found("v2"));
    const got = answered(await cache.get(URL_, "json", load));
    expect(got).toMatchObject({ stale: false, outcome: { body: "v2" } });
    expect(load).toHaveBeenCalledTimes(1);
  });
  it("keeps not-found and failed outcomes 5 minutes", async () => {
    const { cache, clock } = setup();
    const load = vi.fn(async () => failed("not_found"));
    answered(await cache.get(URL_, "json", load));
    clock.advance(299_999);
    answered(await cache.get(URL_, "json", load));
    expect(load).toHaveBeenCalledTimes(1);
    clock.advance(2);
    answered(await cache.get(URL_, "json", load));
    expect(load).toHaveBeenCalledTimes(2);
  });
  it("a refresh that times out keeps the stale document", async () => {
    const { cache, clock } = setup();
    answered(await cache.get(URL_, "json", async () => found("v1")));
    clock.advance(2 * H);
    answered(await cache.get(URL_, "json", async () => failed("timeout")));
    await new Promise((r) => setTimeout(r, 0));
    const got = answered(await cache.get(URL_, "json", async () => failed("timeout")));
    expect(got.outcome.ok && got.outcome.body).toBe("v1");
  });
  it.each([
    [429, "v1"],
    [503, "v1"],
    [404, "(gone)"],
    [410, "(gone)"],
  ])(
    "a refresh answered HTTP %i: a 429 or 5xx keeps the stale document as a timeout does; any other answer takes effect",
    async (http, body) => {
      const { cache, clock } = setup();
      answered(await cache.get(URL_, "json", async () => found("v1")));
      clock.advance(2 * H);
      const answer: FetchOutcome = Object.assign(failed("not_found"), { httpStatus: http });
      answered(await cache.get(URL_, "json", async () => answer));
      await new Promise((r) => setTimeout(r, 0));
      const got = answered(await cache.get(URL_, "json", async () => answer));
      expect(got.outcome.ok ? got.outcome.body : "(gone)").toBe(body);
    },
  );
  it("a refused load is never kept; a document found within the day is answered instead, stale past its hour (docs/architecture.md#traffic)", async () => {
    const { cache, clock } = setup();
    const spent = vi.fn(async () => refusal("address_budget", "the address has had its requests", 42));
    // Nothing known: the refusal itself, and nothing kept.
    expect(await cache.get(URL_, "json", spent)).toEqual({
      refused: "address_budget",
      retryAfterS: 42,
      message: "the address has had its requests",
    });
    expect(cache.size).toBe(0);
    answered(await cache.get(URL_, "json", async () => found("v1")));
    // A refresh refused while the document is fresh: the document, fresh, carrying the refusal it stands in for.
    expect(await cache.get(URL_, "json", spent, { refresh: true })).toMatchObject({
      stale: false,
      outcome: { body: "v1" },
      refused: { refused: "address_budget", retryAfterS: 42 },
    });
    // The live check is answered the refusal, never the document known from before.
    expect(await cache.get(URL_, "json", spent, { refresh: true, live: true })).toMatchObject({ refused: "address_budget" });
    // Re-verification refused past the hour: the document, stale.
    clock.advance(2 * H);
    expect(await cache.get(URL_, "json", spent, { revalidate: true })).toMatchObject({
      stale: true,
      outcome: { body: "v1" },
      refused: { refused: "address_budget" },
    });
    // Past the day, nothing is known any more: the refusal.
    clock.advance(24 * H);
    expect(await cache.get(URL_, "json", spent, { refresh: true })).toMatchObject({ refused: "address_budget" });
    expect(spent).toHaveBeenCalledTimes(5);
  });
  it("a load refused for the caller that started it (its own budget or share) is tried again by each caller that joined it", async () => {
    const { cache } = setup();
    let release: (value: FetchOutcome | FetchRefusal) => void = () => undefined;
    const greedy = vi.fn(() => new Promise<FetchOutcome | FetchRefusal>((resolve) => (release = resolve)));
    const own = vi.fn(async () => found("v1"));
    const first = cache.get(URL_, "json", greedy);
    const second = cache.get(URL_, "json", own);
    await vi.waitFor(() => expect(greedy).toHaveBeenCalledTimes(1));
    expect(await cache.loading(URL_, "json")).toBe(true);
    release(refusal("client_share", "your lookups have had their share", 30));
    expect(await first).toMatchObject({ refused: "client_share" });
    expect(await second).toMatchObject({ outcome: { ok: true, body: "v1" } });
    expect(own).toHaveBeenCalledTimes(1);
    expect(answered(await cache.get(URL_, "json", greedy)).outcome).toMatchObject({ body: "v1" });
  });
  it("shares one load between concurrent cold requests", async () => {
    const { cache } = setup();
    const load = vi.fn(async () => found("v1"));
    await Promise.all(Array.from({ length: 20 }, () => cache.get(URL_, "json", load)));
    expect(load).toHaveBeenCalledTimes(1);
  });
  it("refresh re-fetches now", async () => {
    const { cache } = setup();
    const load = vi.fn(async () => found("v1"));
    answered(await cache.get(URL_, "json", load));
    answered(await cache.get(URL_, "json", load, { refresh: true }));
    expect(load).toHaveBeenCalledTimes(2);
  });
  it("keeps JSON and HTML fetches of one URL apart", async () => {
    const { cache } = setup();
    const load = vi.fn(async () => found("x"));
    answered(await cache.get(URL_, "json", load));
    answered(await cache.get(URL_, "html", load));
    expect(load).toHaveBeenCalledTimes(2);
  });
  it("mayHold: false only when nothing is held or in flight for the URL in that mode", async () => {
    const { cache } = setup();
    expect(cache.mayHold(URL_, "json")).toBe(false);
    let answer: (o: FetchOutcome) => void = () => undefined;
    const pending = cache.get(URL_, "json", () => new Promise((r) => (answer = r)));
    await new Promise((r) => setImmediate(r)); // the get has read the cache and started its load
    expect(cache.mayHold(URL_, "json")).toBe(true);
    answer(failed("not_found"));
    await pending;
    expect(cache.mayHold(URL_, "json")).toBe(true);
    expect(cache.mayHold(URL_, "html")).toBe(false);
  });
  it("is bounded by bytes, evicting the least recently used", async () => {
    const cache = createDocumentCache({ maxBytes: 3 * 1024 * 1024 });
    for (let i = 0; i < 10; i++) answered(await cache.get(`https://a.example/${i}`, "json", async () => found("x".repeat(600_000))));
    expect(cache.size).toBeLessThan(10);
    expect(cache.size).toBeGreaterThan(0);
  });

  it("counts a found document's text and the parse kept beside it: 4 MiB holds three of 300,000 characters", async () => {
    const cache = createDocumentCache({ maxBytes: 4 * 1024 * 1024 });
    for (let i = 0; i < 10; i++) answered(await cache.get(`https://a.example/${i}`, "json", async () => found("x".repeat(300_000))));
    expect(cache.size).toBe(3);
  });

  it("says until when each answer stands, and its generation moves with every outcome kept, replaced, dropped or cleared", async () => {
    const { cache, clock } = setup();
    const g0 = cache.generation;
    const start = clock.now();
    expect(answered(await cache.get(URL_, "json", async () => found("v1"))).until).toBe(start + H);
    const g1 = cache.generation;
    expect(g1).toBeGreaterThan(g0);
    // Reading changes nothing.
    expect((await cache.peek(URL_, "json", async () => found("v1")))?.until).toBe(start + H);
    expect(cache.generation).toBe(g1);
    // A failure stands 5 minutes; a stale document is asked again each time (its refresh may not have started).
    expect(answered(await cache.get("https://b.example/x", "json", async () => failed("not_found"))).until).toBe(start + 5 * 60_000);
    clock.advance(H + 1);
    let refresh!: (o: FetchOutcome) => void;
    const stale = await cache.peek(URL_, "json", () => new Promise((r) => (refresh = r)));
    expect(stale).toMatchObject({ stale: true, until: clock.now() });
    const g2 = cache.generation;
    refresh(found("v2"));
    await vi.waitFor(() => expect(cache.generation).toBeGreaterThan(g2));
    const g3 = cache.generation;
    cache.clear();
    expect(cache.generation).toBeGreaterThan(g3);
    // Evictions move it too.
    const small = createDocumentCache({ maxBytes: 1024 * 1024 });
    answered(await small.get("https://a.example/0", "json", async () => found("x".repeat(200_000))));
    const before = small.generation;
    answered(await small.get("https://a.example/1", "json", async () => found("x".repeat(200_000))));
    expect(small.size).toBe(1);
    expect(small.generation).toBeGreaterThanOrEqual(before + 2);
  });
});

describe("the in-process tier in front of a shared one (docs/deploying.md#what-redis-holds)", () => {
  function tiered(localMs: number) {
    let t = 1_000_000;
    const clock = { now: () => t, advance: (ms: number) => (t += ms) };
    const held = new Map<string, { outcome: FetchOutcome; fetchedAt: number }>();
    const reads: string[] = [];
    const shared = {
      read: async (key: string) => {
        reads.push(key);
        return held.get(key);
      },
      loading: async () => false,
    };
    const cache = createDocumentCache({ now: clock.now, shared, localMs });
    return { cache, clock, held, reads };
  }
  const never = async (): Promise<FetchOutcome> => {
    throw new Error("fetched");
  };

  it("mayHold is always true: only the shared tier can say whether the fleet holds it", () => {
    expect(tiered(5000).cache.mayHold(URL_, "json")).toBe(true);
  });
  it("an answer another instance fetched is read from the shared tier, not fetched", async () => {
    const { cache, clock, held } = tiered(5000);
    held.set(`json ${URL_}`, { outcome: found("theirs"), fetchedAt: clock.now() - 1000 });
    const got = answered(await cache.get(URL_, "json", never));
    expect(got.outcome).toMatchObject({ body: "theirs" });
    expect(got.fetchedAt).toBe(clock.now() - 1000);
    // It stands in this tier until the shared tier is asked again.
    expect(got.until).toBe(clock.now() + 5000);
  });

  it("a local answer stands `localMs`; then a newer shared one replaces it, and an unchanged one is kept as it was", async () => {
    const { cache, clock, held, reads } = tiered(5000);
    const mine = answered(await cache.get(URL_, "json", async () => found("v1")));
    clock.advance(1000);
    expect(answered(await cache.get(URL_, "json", never)).outcome).toBe(mine.outcome);
    expect(reads).toHaveLength(1); // the miss before the fetch only
    clock.advance(5000);
    const g = cache.generation;
    // Redis has nothing newer: the same object (its parse is kept), the generation unmoved.
    expect(answered(await cache.get(URL_, "json", never)).outcome).toBe(mine.outcome);
    expect(cache.generation).toBe(g);
    clock.advance(5000);
    held.set(`json ${URL_}`, { outcome: found("v2"), fetchedAt: clock.now() - 10 });
    expect(answered(await cache.get(URL_, "json", never)).outcome).toMatchObject({ body: "v2" });
    expect(cache.generation).toBeGreaterThan(g);
  });

  it("with no local tier at all (localMs 0), what was just read from the shared tier is used", async () => {
    const { cache, clock, held } = tiered(0);
    held.set(`json ${URL_}`, { outcome: found("theirs"), fetchedAt: clock.now() });
    expect(answered(await cache.get(URL_, "json", never)).outcome).toMatchObject({ body: "theirs" });
  });
});
