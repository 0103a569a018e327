/**
 * The traffic room (docs/architecture.md#traffic): every limit declared in ./limits.ts, built here
 * into limiters, and the refusals they give as values (./refusal.ts), answered in one place
 * (./answer.ts). Framework-free: the fetcher, the resolver, the web app and the CLI all use it.
 */
import {
  FETCH_DEADLINE_MS,
  LIMITS,
  refusedAt,
  windowSpanMs,
  type LimitDeclaration,
  type LimitName,
  type TrafficSettings,
} from "./limits.ts";
import type { FetchRefusal } from "./refusal.ts";
import type { FetchBudgets } from "./budgets.ts";
import { createSharedCounter, type RedisLink } from "./shared-window.ts";
import { createLocalCounter, limiterOn, takeTogether, type Counter, type RateLimiter } from "./window.ts";

export type { Counter, JointDecision, RateDecision, RateLimiter, Take, Used } from "./window.ts";
export { answerRefusal, type RefusalAnswer } from "./answer.ts";
export { OVER_LIMIT_DELAY_MS, REFUSAL_WORDS, RefusalBody } from "./answer.ts";
export { addressGroup, clientKey } from "./client.ts";
export { boundFor } from "./fair.ts";
export { createInProgress } from "./in-progress.ts";
export { windowSpanMs, type LimitDeclaration } from "./limits.ts";
export { createOutboundCount, createOutboundGate } from "./outbound.ts";
export { REFUSAL_KINDS } from "./refusal.ts";
export { createSearchGate, searchGateOptions } from "./search-gate.ts";
export { LIMITS, refusedAt, trafficSettings, type TrafficSettings, type LimitName } from "./limits.ts";
export { isRefusal, refusal, type FetchRefusal, type Refusal, type RefusalKind } from "./refusal.ts";

/** The limits counted over a sliding window (a minute, or 10 s). */
export type WindowName = { [K in LimitName]: (typeof LIMITS)[K]["per"] extends "minute" | "10 s" ? K : never }[LimitName];
export const WINDOW_NAMES = (Object.keys(LIMITS) as LimitName[]).filter(
  (n): n is WindowName => LIMITS[n].per === "minute" || LIMITS[n].per === "10 s",
);

/** One limiter per windowed limit: counted in Redis for a fleet where the declaration says so, else here. */
export type Windows = Record<WindowName, RateLimiter>;

/** The limits each request of a fetch spends ({@link fetchBudgets}), all counted in one place. */
export const FETCH_BUDGET_NAMES = [
  "hostPerMinute",
  "hostSharePerMinute",
  "addressPerMinute",
  "addressSharePerMinute",
  "addressPerTenSeconds",
] as const satisfies readonly WindowName[];
const isFetchBudget = (name: WindowName) => (FETCH_BUDGET_NAMES as readonly WindowName[]).includes(name);

/** The fleet's Redis, when there is one: its link and the prefix of every key. */
export type FleetCounting = { link: RedisLink; keyPrefix: string };

/**
 * `sendMarginMs`: how long after its spend a request may still reach the publisher, the fetch
 * deadline; the limits that count sends count each that much longer than a minute. `budgets`: where
 * this instance counts the fetch budgets when not here (the fetch thread's count,
 * docs/architecture.md#fetch-and-memory); a fleet's Redis still counts them first.
 */
export function createWindows(
  settings: TrafficSettings,
  fleet: FleetCounting | null = null,
  now?: () => number,
  sendMarginMs: number = FETCH_DEADLINE_MS,
  budgets?: Counter,
): Windows {
  const options = { keyPrefix: fleet?.keyPrefix ?? "", ...(now ? { now } : {}) };
  // Each count with Redis before it when there is a fleet.
  const counting = (own: Counter) => ({ own, fleet: fleet ? createSharedCounter(fleet.link, own, options) : null });
  const here = counting(createLocalCounter(now ? { now } : {}));
  const spent = budgets ? counting(budgets) : here;
  const windows = {} as Windows;
  for (const name of WINDOW_NAMES) {
    const d: LimitDeclaration = LIMITS[name];
    const where = isFetchBudget(name) ? spent : here;
    windows[name] = limiterOn((d.fleet && where.fleet) || where.own, name, settings[name], windowSpanMs(d, sendMarginMs));
  }
  return windows;
}

/** The refusal of a host name whose minute is spent (`hostPerMinute`): for a fetch, and for a lookup's admission. */
export const hostSpent = (host: string, settings: TrafficSettings, retryAfterS: number): FetchRefusal =>
  refusedAt(
    "hostPerMinute",
    `${host} has had the ${settings.hostPerMinute} requests a minute this resolver sends one site; try again in ${retryAfterS} s`,
    retryAfterS,
  );

export type { FetchBudgets, FetchTarget } from "./budgets.ts";

export function fetchBudgets(windows: Windows, settings: TrafficSettings): FetchBudgets {
  return async ({ host, address, client }) => {
    const decided = await takeTogether([
      windows.hostPerMinute.part(host),
      windows.hostSharePerMinute.part(`${client} ${host}`),
      windows.addressPerMinute.part(address),
      windows.addressSharePerMinute.part(`${client} ${address}`),
      windows.addressPerTenSeconds.part(address),
    ]);
    if (decided.ok) return null;
    const retry = decided.retryAfterS;
    switch (decided.index) {
      case 0:
        return hostSpent(host, settings, retry);
      case 1: {
        const message = `your lookups have had their share (${settings.hostSharePerMinute} a minute) of the requests this resolver sends ${host}; try again in ${retry} s`;
        return refusedAt("hostSharePerMinute", message, retry);
      }
      case 2: {
        const message = `the server of ${host} (${address}) has had the ${settings.addressPerMinute} requests a minute this resolver sends one address; try again in ${retry} s`;
        return refusedAt("addressPerMinute", message, retry);
      }
      case 3: {
        const message = `your lookups have had their share (${settings.addressSharePerMinute} a minute) of the requests this resolver sends the server of ${host} (${address}); try again in ${retry} s`;
        return refusedAt("addressSharePerMinute", message, retry);
      }
      default: {
        const message = `the server of ${host} (${address}) has had ${settings.addressPerTenSeconds} requests in 10 s from this resolver, which spreads the ${settings.addressPerMinute} a minute it sends one address over the minute; try again in ${retry} s`;
        return refusedAt("addressPerTenSeconds", message, retry);
      }
    }
  };
}
