/**
 * One feed of every change (docs/api.md#changes), on both engines: `/changes.xml` read by a real feed
 * parser (@rowanmanning/feed-parser) following every `next` link to the end, every entry once, newest
 * first, with the ids of the entity feeds; `/api/changes` paged at a small limit, every change once,
 * oldest first, each answer valid by the OpenAPI document's schema; cursors refused that were not
 * handed out.
 */
import { parseFeed } from "@rowanmanning/feed-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "ident-resolver/setup";
import type { Claim, EntityResult } from "ident-resolver";
import { openStore, type Store } from "ident-resolver/store";
import { changeId } from "ident-resolver/store";
import { Changes } from "ident-resolver/store";
import { createWindows, trafficSettings } from "ident-resolver/traffic";
import { createSearchGate } from "ident-resolver/traffic";
import { createApi, type ApiDeps } from "../../web/api";
import { answerChangesFeed, CHANGES_FEED_ENTRIES } from "../../web/feed-routes";
import { apiGet } from "../helpers/api-request";
import { useEngines } from "../helpers/engines";

const HOUR = 3600_000;
const T0 = Date.parse("2026-05-01T08:00:00.000Z");
const at = (hours: number) => new Date(T0 + hours * HOUR).toISOString();
const ORIGIN = "https://resolver.example";

function result(domain: string, when: string, verified: boolean): EntityResult {
  const claim = (i: number): Claim => ({
    id: `@${domain.split(".")[0]}@guild${i}.example/members`,
    verified,
    ...(verified ? {} : { reason: "not_listed" as const }),
    claimed: { id: `@${domain.split(".")[0]}@guild${i}.example/members` },
    problems: [],
  });
  return {
    entity: { status: "accepted", domain, network_id: `§:entity:${domain}`, details: { name: `<b>${domain}</b>` }, problems: [] },
    properties: [],
    credentials: [claim(1), claim(2)],
    connections: [],
    jsonld: null,
    cache: { fetched_at: when, stale: false },
  };
}

const { engines: ENGINES } = useEngines("changes");

describe.each(ENGINES)("every change, on $name", ({ location }) => {
  let store: Store;
  let deps: ApiDeps;
  beforeAll(async () => {
    store = await openStore(await location());
    // 30 entities, each recorded twice with its two claims turning: more changes than two feed pages hold.
    for (let i = 0; i < 30; i++) {
      const d = `m${String(i).padStart(2, "0")}.example`;
      await store.record(result(d, at(i), true));
      await store.record(result(d, at(i + 0.5), false));
    }
    const settings = trafficSettings({ searches: 1_000_000 });
    deps = {
      resolver: {
        store: Promise.resolve(store),
        traffic: { settings, windows: createWindows(settings), searches: createSearchGate({ atOnce: 4, waiting: 16, perClient: 2 }) },
        metrics: { refusals: { inc: () => undefined } },
      } as unknown as ApiDeps["resolver"],
      clientOf: () => "203.0.113.9",
      log: createLogger("error", () => undefined),
    };
  }, 120_000);
  afterAll(() => store.close());

  it("/changes.xml: a feed parser follows every next link to the end and reads every change once, newest first, with the entity feeds' ids", async () => {
    const all = (await store.changes({ after: null }, 10_000)).changes;
    expect(all.length).toBeGreaterThan(2 * CHANGES_FEED_ENTRIES);
    const app = Object.assign({}, deps, { config: { publicUrl: ORIGIN } }) as unknown as Parameters<typeof answerChangesFeed>[0];
    const ids: string[] = [];
    let url: string | null = `${ORIGIN}/changes.xml`;
    for (let pages = 0; url && pages < 100; pages++) {
      const response = await answerChangesFeed(app, new Request(url));
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("application/atom+xml");
      const body = await response.text();
      const feed = parseFeed(body);
      ids.push(...feed.items.map((item) => item.id ?? ""));
      // RFC 5005 §3: the next page, where older changes remain.
      url = /<link rel="next" type="application\/atom\+xml" href="([^"]+)"/.exec(body)?.[1]?.replaceAll("&amp;", "&") ?? null;
    }
    expect(url).toBeNull();
    expect(ids).toEqual([...all].reverse().map(changeId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("/changes.xml answers a page link it did not hand out 400, and If-None-Match with its ETag 304", async () => {
    const app = Object.assign({}, deps, { config: { publicUrl: ORIGIN } }) as unknown as Parameters<typeof answerChangesFeed>[0];
    expect((await answerChangesFeed(app, new Request(`${ORIGIN}/changes.xml?before=bogus`))).status).toBe(400);
    const first = await answerChangesFeed(app, new Request(`${ORIGIN}/changes.xml`));
    const again = await answerChangesFeed(
      app,
      new Request(`${ORIGIN}/changes.xml`, { headers: { "if-none-match": first.headers.get("etag") ?? "" } }),
    );
    expect(again.status).toBe(304);
  });

  it("/api/changes pages through every change once at a small limit, oldest first, each answer of the documented shape", async () => {
    const api = createApi(deps);
    const all = (await store.changes({ after: null }, 10_000)).changes.map(changeId);
    const ids: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 1000; pages++) {
      const params = new URLSearchParams({ limit: "7", ...(after ? { after } : {}) });
      const reply = await api.answer(apiGet("/api/changes", params));
      expect(reply.status).toBe(200);
      const page = Changes.parse(JSON.parse((reply.body ?? Buffer.alloc(0)).toString("utf8")));
      expect(page.changes.length).toBeLessThanOrEqual(7);
      ids.push(...page.changes.map((c) => c.id));
      if (page.next_cursor === null) break;
      after = page.next_cursor;
    }
    expect(ids).toEqual(all);
  });

  it("/api/changes refuses a cursor it did not hand out, and a limit out of range, in words", async () => {
    const api = createApi(deps);
    for (const params of [{ after: "bogus" }, { limit: "0" }, { limit: "201" }, { limit: "x" }] as Record<string, string>[]) {
      const reply = await api.answer(apiGet("/api/changes", params));
      expect(reply.status, JSON.stringify(params)).toBe(400);
      expect(JSON.parse((reply.body ?? Buffer.alloc(0)).toString("utf8")).error.code).toBe("invalid_query");
    }
  });
});
