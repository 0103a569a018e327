/**
 * `npm run load -- changes` (docs/decisions.md#the-order-of-changes): 40 publishers whose property
 * documents answer 0 to 9 s late and whose connections' ids are 1 to 10,000 characters long, looked
 * up again and again, 5 s apart, their verdicts turning each time (the property owned or not, a new
 * connection), so that slow checks record their changes after faster ones fetched later. Meanwhile one
 * walker polls `/api/changes` from its cursor, and a feed reader polls `/changes.xml` from the newest,
 * following `next` until an entry it has read. Then the index itself is read: how many changes it
 * recorded, how many came after a change with a later `at`, and how many each reader saw, saw twice
 * and missed (goal 0 and 0). Twice: on the embedded store, then on a PostgreSQL server (where one
 * instance's recordings commit at once, on connections of their own). Its own sample network and a
 * fresh `npm start` each time, loopback only.
 */
import path from "node:path";
import { openStore, type StoreLocation } from "ident-resolver/store";
import { changeId } from "ident-resolver/store";
import { startPostgres } from "../test/helpers/postgres";
import { scratchDir } from "../test/helpers/scratch";
import { startSampleNetwork, type SampleNetwork, type Site } from "../test/network/server";
import { type App, counts, get, metric, scrape, sleep, startApp, stopApp } from "./load-kit";

const S = "\u00a7";
const PUBLISHERS = 40;
const ROUNDS = 6;
const ROUND_MS = 5000;
const PORT = 3420;
const entityOf = (i: number) => `c${i}.load.test`;
const propertyOf = (i: number) => `p${i}.load.test`;

/** The same lengths on every run: a small linear congruential generator. */
function lengths(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return 1 + (x % 10_000);
  };
}

/** A connection's id of `n` characters: a URL on the publisher's own host, or its first `n` characters when shorter. */
function connectionId(i: number, round: number, n: number): string {
  const start = `https://n${i}.load.test/r${round}/`;
  return n <= start.length
    ? start.slice(0, n)
    : `${start}${"abcdefghijklmnopqrstuvwxyz0123456789".repeat(Math.ceil(n / 36)).slice(0, n - start.length)}`;
}

/** Publisher `i` in `round`: its entity document (a property, a connection of `n` characters) and its property, owned in even rounds. */
function publisher(i: number, round: number, n: number): Record<string, Site> {
  const entity = {
    network_id: `${S}:entity:${entityOf(i)}`,
    entity_type: "person",
    details: { name: `Changing ${i}`, domain: entityOf(i) },
    properties: [{ id: `${S}:property:${propertyOf(i)}`, name: `Site ${i}` }],
    other_connections: [{ id: connectionId(i, round, n) }],
  };
  const owners = round % 2 === 0 ? [{ network_id: `${S}:entity:${entityOf(i)}` }] : [{ network_id: `${S}:entity:someone.load.test` }];
  return {
    [entityOf(i)]: { files: { "/ident.json": JSON.stringify(entity) } },
    [propertyOf(i)]: {
      files: { "/ident-property.json": JSON.stringify({ ident_property: { id: `${S}:property:${propertyOf(i)}`, ownership: owners } }) },
      // 0 to 9 s late: the entity's check is recorded that long after its document was fetched.
      routes: { "/ident-property.json": { delay_ms: (i % 10) * 1000 } },
    },
  };
}

/** Every publisher as it is in `round`, on the running network. */
function turn(net: SampleNetwork, round: number, next: () => number): void {
  for (let i = 0; i < PUBLISHERS; i++)
    for (const [domain, site] of Object.entries(publisher(i, round, next())))
      net.change(domain, { files: site.files, routes: site.routes });
}

/** GET of `target` on the app as JSON or text; null when it did not answer 200. */
async function read(port: number, target: string, client: string): Promise<string | null> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}${target}`, {
      headers: { "x-forwarded-for": client },
      signal: AbortSignal.timeout(30_000),
    });
    return r.status === 200 ? await r.text() : null;
  } catch {
    return null;
  }
}

type Seen = { ids: string[]; refused: number };

/** `/api/changes?limit=50` from the walker's cursor, following `next_cursor` to the latest. */
async function pollApi(port: number, seen: Seen, at: { cursor: string | null }): Promise<void> {
  for (;;) {
    const body = await read(port, `/api/changes?limit=50${at.cursor ? `&after=${at.cursor}` : ""}`, "10.78.0.1");
    if (body === null) return void seen.refused++;
    const page = JSON.parse(body) as { changes: { id: string; cursor: string }[]; next_cursor: string | null };
    seen.ids.push(...page.changes.map((c) => c.id));
    at.cursor = page.changes.at(-1)?.cursor ?? at.cursor;
    if (page.next_cursor === null) return;
  }
}

/** `/changes.xml` from the newest, following `next` until an entry read before (RFC 5005 §3). */
async function pollFeed(port: number, seen: Seen, known: Set<string>): Promise<void> {
  const fresh: string[] = [];
  for (let target: string | null = "/changes.xml"; target !== null;) {
    const body = await read(port, target, "10.78.0.2");
    if (body === null) return void seen.refused++;
    const ids = [...body.matchAll(/<entry>\s*<id>([^<]+)<\/id>/g)].map((m) => m[1] ?? "");
    const reached = ids.findIndex((id) => known.has(id));
    fresh.push(...(reached === -1 ? ids : ids.slice(0, reached)));
    const next = /<link rel="next" type="application\/atom\+xml" href="([^"]+)"/.exec(body)?.[1]?.replaceAll("&amp;", "&");
    target = reached !== -1 || next === undefined ? null : next.slice(next.indexOf("/changes.xml"));
  }
  for (const id of fresh) known.add(id);
  seen.ids.push(...fresh);
}

/** Runs `poll` every `everyMs` until stopped; then once more, and answers what it saw. */
function polling(everyMs: number, poll: (seen: Seen) => Promise<void>): () => Promise<Seen> {
  const seen: Seen = { ids: [], refused: 0 };
  let running = true;
  const done = (async () => {
    while (running) {
      await poll(seen);
      await sleep(everyMs);
    }
  })();
  return async () => {
    running = false;
    await done;
    await poll(seen);
    return seen;
  };
}

/** Every change the index at `where` holds, in position order: its id and its `at`. */
async function recorded(where: StoreLocation): Promise<{ id: string; at: string }[]> {
  const store = await openStore(where, () => undefined);
  try {
    const rows = await store.db.query<{ domain: string; kind: "entity"; claim_key: string; at: Date }>(
      "SELECT domain, kind, claim_key, at FROM changes ORDER BY position",
    );
    return rows.map((r) => ({
      id: changeId({ domain: r.domain, kind: r.kind, claim_key: r.claim_key, at: r.at.toISOString() }),
      at: r.at.toISOString(),
    }));
  } finally {
    await store.close();
  }
}

/** What a reader saw of `held`: each once, twice, missed, and seen but not held. */
function tally(held: { id: string }[], seen: Seen): string {
  const ids = new Set(held.map((c) => c.id));
  const once = new Set(seen.ids);
  const missed = [...ids].filter((id) => !once.has(id)).length;
  const extra = [...once].filter((id) => !ids.has(id)).length;
  return `seen ${once.size}, twice ${seen.ids.length - once.size}, missed ${missed}${extra ? `, ${extra} seen that the index no longer holds` : ""}${seen.refused ? `, ${seen.refused} polls not answered 200` : ""}`;
}

/** Looks every publisher up in each round, `ROUND_MS` apart, turning their documents between rounds; each lookup's status. */
async function lookUpRounds(app: App, net: SampleNetwork, next: () => number): Promise<number[]> {
  const t0 = performance.now();
  const lookups: Promise<number>[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await sleep(Math.max(0, t0 + round * ROUND_MS - performance.now()));
    if (round > 0) turn(net, round, next);
    for (let i = 0; i < PUBLISHERS; i++) {
      const client = { "x-forwarded-for": `10.77.${round}.${i}` };
      lookups.push(get(app.port, `/api/resolve?q=${entityOf(i)}&refresh=1`, client, 60_000).then((a) => a.status));
    }
  }
  return Promise.all(lookups);
}

/** Changes of `held` (in position order) that come after one with a later `at`. */
function behind(held: { at: string }[]): number {
  let latest = "";
  let n = 0;
  for (const c of held) {
    if (c.at < latest) n++;
    if (c.at > latest) latest = c.at;
  }
  return n;
}

/** One pass on `where`: the app on it, the lookups and the two readers; the figures in words. */
async function pass(where: StoreLocation): Promise<string> {
  const next = lengths(20260501);
  const sites: Record<string, Site> = {};
  for (let i = 0; i < PUBLISHERS; i++) Object.assign(sites, publisher(i, 0, next()));
  const net = await startSampleNetwork({ extraSites: sites, anyHost: true, names: ["*.load.test"], spread: false });
  const env: Record<string, string> = {
    NODE_EXTRA_CA_CERTS: net.caFile,
    NEXT_TELEMETRY_DISABLED: "1",
    IDENT_CONNECT_TO: net.connectTo,
    ...(where.kind === "server" ? { IDENT_DATABASE_URL: where.url } : { IDENT_DATA_DIR: where.dataDir ?? ":memory:" }),
    IDENT_TRUSTED_HOPS: "1",
    // The readers poll more than a client's searches a minute; every publisher is one address.
    IDENT_SEARCHES_PER_MIN: "1000000",
    IDENT_STORE_READS_PER_MIN: "1000000",
    IDENT_ADDRESS_BUDGET_PER_MIN: "1000000",
  };
  let unrecorded = 0;
  const app = await startApp(PORT, env, (chunk) => (unrecorded += chunk.split("was not recorded").length - 1));
  const cursor = { cursor: null as string | null };
  const stopApi = polling(250, (seen) => pollApi(app.port, seen, cursor));
  const known = new Set<string>();
  const stopFeed = polling(1000, (seen) => pollFeed(app.port, seen, known));
  const statuses = await lookUpRounds(app, net, next);
  for (let i = 0; i < 150 && metric(await scrape(app.port), "ident_records_waiting") !== 0; i++) await sleep(200);
  const [api, feed] = await Promise.all([stopApi(), stopFeed()]);
  await stopApp(app);
  await net.close();
  const held = await recorded(where);
  return (
    `lookups ${counts(statuses)}${unrecorded ? `, ${unrecorded} not recorded` : ""}; the index recorded ${held.length} changes, ${behind(held)} of them after a change with a later \`at\`; ` +
    `/api/changes polled every 250 ms: ${tally(held, api)}; /changes.xml read from the newest every second: ${tally(held, feed)}`
  );
}

export async function changesRun(): Promise<void> {
  const what = `${PUBLISHERS} publishers (properties answering 0–9 s late, connections' ids of 1–10,000 characters), each looked up ${ROUNDS} times ${ROUND_MS / 1000} s apart, its verdicts turning`;
  const embedded = await pass({ kind: "embedded", dataDir: path.join(scratchDir("ident-load-changes-"), "data") });
  console.log(`changes   ${what}, embedded: ${embedded} (goal: twice 0, missed 0)`);
  const pg = await startPostgres();
  try {
    const server = await pass({ kind: "server", url: await pg.database("load_changes") });
    console.log(`changes   the same on PostgreSQL: ${server} (goal: twice 0, missed 0)`);
  } finally {
    await pg.stop();
  }
}
