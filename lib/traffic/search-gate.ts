/**
 * Searches of the index at once (docs/architecture.md#traffic: `searchesAtOnce`, `searchesWaiting`,
 * `searchesInProgress`): a search holds the engine that also records every lookup's results, so an
 * instance runs only a few at a time, keeps a small queue, and refuses the rest. One client has at most
 * a few in progress. The queue is fair (docs/architecture.md#fair-queues): the next search to run is
 * that of the client with the fewest requests in flight (its searches in progress, or all its requests
 * at the instance when more), then of the one that has searched least lately; a full queue makes room
 * for a newcomer by refusing the newest waiting search of a heavier client, so many addresses
 * searching together cannot keep another client waiting or refused.
 */
import { refusedAt, type TrafficSettings } from "./limits.ts";
import { createHoldings, nextOf, refusedFor, type Weight } from "./fair.ts";
import type { Refusal } from "./refusal.ts";

export type SearchGateOptions = {
  /** Searches running at once (`searchesAtOnce`). */
  atOnce: number;
  /** Searches waiting at most (`searchesWaiting`). */
  waiting: number;
  /** Searches one client may have running or waiting (`searchesInProgress`). */
  perClient: number;
  /** Longest wait for a turn, in ms; then the search is refused as `search_busy`. @default 5000 */
  maxWaitMs?: number;
  /** Clients whose recent searches are remembered at most. @default 10000 */
  maxClients?: number;
  now?: () => number;
};

export type SearchRefusal = Refusal<"search_busy" | "searches_in_progress">;

/**
 * The gate of an instance on its engine (`searchesAtOnce`): the embedded engine runs one query at a
 * time, so a second search at once would only wait in the engine's own line, ahead of the lookups'
 * writes and of the client the fair queue would have let in first; a PostgreSQL server runs
 * `searchesAtOnce` side by side.
 */
export function searchGateOptions(
  engine: "embedded" | "server",
  limits: Pick<TrafficSettings, "searchesAtOnce" | "searchesWaiting" | "searchesInProgress">,
): SearchGateOptions {
  const atOnce = engine === "embedded" ? 1 : limits.searchesAtOnce;
  return { atOnce, waiting: limits.searchesWaiting, perClient: limits.searchesInProgress };
}

/**
 * A client's requests in flight at the instance, every kind together (web/shed.ts counts them): a
 * client keeping four requests open weighs four, though the gate holds two of them and refuses the rest.
 */
export type InFlight = () => number;

type Waiter = { client: string; inFlight: InFlight; turn: () => void; refuse: (r: SearchRefusal) => void };

/** No measure of requests in flight but the gate's own. */
const NONE: InFlight = () => 0;

/** How fast a client's record of recent searches fades: it halves every 10 s. */
const HALF_LIFE_MS = 10_000;

/** What a gate keeps: its options, the searches running, the queue, and each client's searches. */
type Gate = {
  options: SearchGateOptions;
  now: () => number;
  maxWaitMs: number;
  maxClients: number;
  retryAfterS: number;
  running: number;
  queue: Waiter[];
  /** Searches in progress (running or waiting) per client. */
  inProgress: ReturnType<typeof createHoldings>;
  /** Each client's recent searches, a count that halves every {@link HALF_LIFE_MS}, and when it was last set. */
  recent: Map<string, { score: number; at: number }>;
  weight: Weight<Waiter>;
};

export function createSearchGate(options: SearchGateOptions) {
  const maxWaitMs = options.maxWaitMs ?? 5000;
  const g: Gate = {
    options,
    now: options.now ?? Date.now,
    maxWaitMs,
    maxClients: options.maxClients ?? 10_000,
    retryAfterS: Math.max(1, Math.ceil(maxWaitMs / 1000)),
    running: 0,
    queue: [],
    inProgress: createHoldings(),
    recent: new Map(),
    weight: (w) => weightOf(g, w.client, w.inFlight),
  };
  return {
    /**
     * Runs `task` in its turn, or answers the refusal; the task's own failure is passed on as it is.
     * `inFlight` tells the client's requests in flight at the instance, when known.
     */
    run: <T>(client: string, task: () => Promise<T>, inFlight: InFlight = NONE) => run(g, client, task, inFlight),
    /** The refusal a search by `client` would meet now, or null when it would run or wait. */
    wouldRefuse: (client: string, inFlight: InFlight = NONE) => wouldRefuse(g, client, inFlight),
    /** When a refused search may be tried again, in seconds. */
    retryAfterS: g.retryAfterS,
    stats: () => ({ running: g.running, waiting: g.queue.length, clients: g.inProgress.clients() }),
  };
}

function scoreOf(g: Gate, client: string, t = g.now()): number {
  const r = g.recent.get(client);
  return r ? r.score * 0.5 ** ((t - r.at) / HALF_LIFE_MS) : 0;
}

function started(g: Gate, client: string) {
  const t = g.now();
  const score = scoreOf(g, client, t) + 1;
  g.recent.delete(client); // re-inserted last: the map's order is least recently used first
  g.recent.set(client, { score, at: t });
  if (g.recent.size > g.maxClients) for (const key of g.recent.keys()) if (g.recent.size > g.maxClients) g.recent.delete(key);
}

/**
 * A client's weight (docs/architecture.md#fair-queues): its searches in progress or, when more, its
 * requests in flight at the instance; then how much it has searched lately. `counted` is one for a
 * newcomer's search, not yet in progress.
 */
const weightOf = (g: Gate, client: string, inFlight: InFlight, counted = 0) =>
  [Math.max(g.inProgress.of(client) + counted, inFlight()), scoreOf(g, client)] as const;

const busy = (g: Gate, why: string): SearchRefusal =>
  refusedAt(
    "searchesWaiting",
    `this resolver is searching its index as much as it may at once (${why}); try again in ${g.retryAfterS} s`,
    g.retryAfterS,
  );

const tooMany = (g: Gate): SearchRefusal =>
  refusedAt(
    "searchesInProgress",
    `you have ${g.options.perClient} searches in progress, as many as one client may at once; try again when one has finished`,
    1,
  );

function handOn(g: Gate) {
  const at = nextOf(g.queue, g.weight);
  if (at < 0) return void g.running--;
  const [next] = g.queue.splice(at, 1);
  next?.turn(); // the slot passes on: `running` is unchanged
}

function wouldRefuse(g: Gate, client: string, inFlight: InFlight): SearchRefusal | null {
  const { options } = g;
  if (g.inProgress.of(client) >= options.perClient) return tooMany(g);
  if (g.running < options.atOnce || g.queue.length < options.waiting) return null;
  // A full queue makes room for a client lighter than one waiting.
  return refusedFor(g.queue, g.weight, weightOf(g, client, inFlight, 1)) >= 0
    ? null
    : busy(g, `${options.atOnce} running and ${options.waiting} waiting`);
}

/** Waits in the queue for a turn: null when it comes, or the refusal (pushed out by a lighter client, or waited too long). */
function waitTurn(g: Gate, client: string, inFlight: InFlight): Promise<SearchRefusal | null> {
  const { options } = g;
  if (g.queue.length >= options.waiting) {
    // Room for this one (counted in now): the newest waiting search of the heaviest client, which wouldRefuse found heavier.
    const [out] = g.queue.splice(refusedFor(g.queue, g.weight, weightOf(g, client, inFlight)), 1);
    out?.refuse(busy(g, `${options.atOnce} running and ${options.waiting} waiting; clients with fewer searches in progress went first`));
  }
  return new Promise<SearchRefusal | null>((resolve) => {
    const waiter: Waiter = {
      client,
      inFlight,
      turn: () => {
        clearTimeout(timer);
        resolve(null);
      },
      refuse: (r) => {
        clearTimeout(timer);
        resolve(r);
      },
    };
    const timer = setTimeout(() => {
      const i = g.queue.indexOf(waiter);
      if (i >= 0) g.queue.splice(i, 1);
      resolve(busy(g, `no turn within ${g.maxWaitMs} ms`));
    }, g.maxWaitMs);
    g.queue.push(waiter);
  });
}

async function run<T>(g: Gate, client: string, task: () => Promise<T>, inFlight: InFlight): Promise<T | SearchRefusal> {
  const refused = wouldRefuse(g, client, inFlight);
  if (refused) return refused;
  g.inProgress.add(client);
  try {
    if (g.running < g.options.atOnce) g.running++;
    else {
      const turn = await waitTurn(g, client, inFlight);
      if (turn) return turn;
    }
    started(g, client);
    try {
      return await task();
    } finally {
      handOn(g);
    }
  } finally {
    g.inProgress.remove(client);
  }
}

export type SearchGate = ReturnType<typeof createSearchGate>;
