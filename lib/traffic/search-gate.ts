/**
 * Searches of the index at once (docs/architecture.md#traffic: `searchesAtOnce`, `searchesWaiting`,
 * `searchesInProgress`): a search holds the engine that also records every lookup's results, so an
 * instance runs only a few at a time, keeps a small queue, and refuses the rest. One client has at most
 * a few in progress. The queue is fair: the next search to run is that of the client that has searched
 * least lately, and a full queue makes room for a newcomer by refusing the waiting search of the client
 * that has searched most, so many addresses searching together cannot keep another client waiting.
 */
import { refusedAt, type TrafficSettings } from "./limits";
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

type Waiter = { client: string; at: number; turn: () => void; refuse: (r: SearchRefusal) => void };

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
  const inProgress = new Map<string, number>();
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
  const enter = (client: string) => inProgress.set(client, (inProgress.get(client) ?? 0) + 1);
  function leave(client: string) {
    const n = (inProgress.get(client) ?? 1) - 1;
    if (n > 0) inProgress.set(client, n);
    else inProgress.delete(client);
  }

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

  /** The waiter whose client has searched least lately (the earliest among equals). */
  function nextWaiter(): number {
    const t = now();
    let best = -1;
    let bestScore = Infinity;
    queue.forEach((w, i) => {
      const s = scoreOf(w.client, t);
      if (s < bestScore) [best, bestScore] = [i, s];
    });
    return best;
  }

  function handOn() {
    const at = nextWaiter();
    if (at < 0) return void running--;
    const [next] = queue.splice(at, 1);
    next?.turn(); // the slot passes on: `running` is unchanged
  }

  /** The refusal a search by `client` would meet now, or null when it would run or wait. */
  function wouldRefuse(client: string): SearchRefusal | null {
    if ((inProgress.get(client) ?? 0) >= options.perClient) return tooMany();
    if (running < options.atOnce || queue.length < options.waiting) return null;
    // A full queue makes room for a client that has searched less lately than one waiting.
    const mine = scoreOf(client);
    return queue.some((w) => scoreOf(w.client) > mine) ? null : busy(`${options.atOnce} running and ${options.waiting} waiting`);
  }

  /** Runs `task` in its turn, or answers the refusal; the task's own failure is passed on as it is. */
  async function run<T>(client: string, task: () => Promise<T>): Promise<T | SearchRefusal> {
    const refused = wouldRefuse(client);
    if (refused) return refused;
    enter(client);
    try {
      if (running < options.atOnce) running++;
      else {
        if (queue.length >= options.waiting) {
          // Room for this one: the newest waiting search of the client that has searched most lately.
          const t = now();
          let worst = -1;
          let worstScore = -Infinity;
          queue.forEach((w, i) => {
            const s = scoreOf(w.client, t);
            if (s >= worstScore) [worst, worstScore] = [i, s];
          });
          const [out] = queue.splice(worst, 1);
          out?.refuse(busy(`${options.atOnce} running and ${options.waiting} waiting; clients that searched less lately went first`));
        }
        const turn = await new Promise<SearchRefusal | null>((resolve) => {
          const waiter: Waiter = {
            client,
            at: now(),
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
      leave(client);
    }
  }

  return {
    run,
    wouldRefuse,
    /** When a refused search may be tried again, in seconds. */
    retryAfterS,
    stats: () => ({ running, waiting: queue.length, clients: inProgress.size }),
  };
}

export type SearchGate = ReturnType<typeof createSearchGate>;
