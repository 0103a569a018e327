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
import { refusedAt, type TrafficSettings } from "./limits";
import { createHoldings, nextOf, refusedFor, type Weight } from "./fair";
import type { Refusal } from "./refusal";

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

export function createSearchGate(options: SearchGateOptions) {
  const now = options.now ?? Date.now;
  const maxWaitMs = options.maxWaitMs ?? 5000;
  const maxClients = options.maxClients ?? 10_000;
  const retryAfterS = Math.max(1, Math.ceil(maxWaitMs / 1000));
  let running = 0;
  const queue: Waiter[] = [];
  /** Searches in progress (running or waiting) per client. */
  const inProgress = createHoldings();
  /** Each client's recent searches, a count that halves every {@link HALF_LIFE_MS}, and when it was last set. */
  const recent = new Map<string, { score: number; at: number }>();

  const scoreOf = (client: string, t = now()): number => {
    const r = recent.get(client);
    return r ? r.score * 0.5 ** ((t - r.at) / HALF_LIFE_MS) : 0;
  };
  function started(client: string) {
    const t = now();
    const score = scoreOf(client, t) + 1;
    recent.delete(client); // re-inserted last: the map's order is least recently used first
    recent.set(client, { score, at: t });
    if (recent.size > maxClients) for (const key of recent.keys()) if (recent.size > maxClients) recent.delete(key);
  }
  /**
   * A client's weight (docs/architecture.md#fair-queues): its searches in progress or, when more, its
   * requests in flight at the instance; then how much it has searched lately. `counted` is one for a
   * newcomer's search, not yet in progress.
   */
  const weightOf = (client: string, inFlight: InFlight, counted = 0) =>
    [Math.max(inProgress.of(client) + counted, inFlight()), scoreOf(client)] as const;
  const weight: Weight<Waiter> = (w) => weightOf(w.client, w.inFlight);

  const busy = (why: string): SearchRefusal =>
    refusedAt(
      "searchesWaiting",
      `this resolver is searching its index as much as it may at once (${why}); try again in ${retryAfterS} s`,
      retryAfterS,
    );
  const tooMany = (): SearchRefusal =>
    refusedAt(
      "searchesInProgress",
      `you have ${options.perClient} searches in progress, as many as one client may at once; try again when one has finished`,
      1,
    );

  function handOn() {
    const at = nextOf(queue, weight);
    if (at < 0) return void running--;
    const [next] = queue.splice(at, 1);
    next?.turn(); // the slot passes on: `running` is unchanged
  }

  /** The refusal a search by `client` would meet now, or null when it would run or wait. */
  function wouldRefuse(client: string, inFlight: InFlight = NONE): SearchRefusal | null {
    if (inProgress.of(client) >= options.perClient) return tooMany();
    if (running < options.atOnce || queue.length < options.waiting) return null;
    // A full queue makes room for a client lighter than one waiting.
    return refusedFor(queue, weight, weightOf(client, inFlight, 1)) >= 0
      ? null
      : busy(`${options.atOnce} running and ${options.waiting} waiting`);
  }

  /**
   * Runs `task` in its turn, or answers the refusal; the task's own failure is passed on as it is.
   * `inFlight` tells the client's requests in flight at the instance, when known.
   */
  async function run<T>(client: string, task: () => Promise<T>, inFlight: InFlight = NONE): Promise<T | SearchRefusal> {
    const refused = wouldRefuse(client, inFlight);
    if (refused) return refused;
    inProgress.add(client);
    try {
      if (running < options.atOnce) running++;
      else {
        if (queue.length >= options.waiting) {
          // Room for this one (counted in now): the newest waiting search of the heaviest client, which wouldRefuse found heavier.
          const [out] = queue.splice(refusedFor(queue, weight, weightOf(client, inFlight)), 1);
          out?.refuse(busy(`${options.atOnce} running and ${options.waiting} waiting; clients with fewer searches in progress went first`));
        }
        const turn = await new Promise<SearchRefusal | null>((resolve) => {
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
            const i = queue.indexOf(waiter);
            if (i >= 0) queue.splice(i, 1);
            resolve(busy(`no turn within ${maxWaitMs} ms`));
          }, maxWaitMs);
          queue.push(waiter);
        });
        if (turn) return turn;
      }
      started(client);
      try {
        return await task();
      } finally {
        handOn();
      }
    } finally {
      inProgress.remove(client);
    }
  }

  return {
    run,
    wouldRefuse,
    /** When a refused search may be tried again, in seconds. */
    retryAfterS,
    stats: () => ({ running, waiting: queue.length, clients: inProgress.clients() }),
  };
}

export type SearchGate = ReturnType<typeof createSearchGate>;
