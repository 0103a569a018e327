/**
 * The traffic room (docs/architecture.md#traffic): every limit declared in ./limits.ts, built here
 * into limiters, and the refusals they give as values (./refusal.ts), answered in one place
 * (./answer.ts). Framework-free: the fetcher, the resolver, the web app and the CLI all use it.
 */
import { LIMITS, type LimitName, type TrafficSettings } from "./limits";
import { refusal, type FetchRefusal } from "./refusal";
import { createSharedWindowLimiter, type RedisLink } from "./shared-window";
import { createWindowLimiter, type RateDecision, type RateLimiter } from "./window";

export type { RateDecision, RateLimiter } from "./window";
export { answerRefusal, type RefusalAnswer } from "./answer";
export { LIMITS, trafficSettings, type TrafficSettings, type LimitName } from "./limits";
export { isRefusal, refusal, type FetchRefusal, type Refusal, type RefusalKind } from "./refusal";

/** The limits counted per minute. */
export type WindowName = { [K in LimitName]: (typeof LIMITS)[K]["per"] extends "minute" ? K : never }[LimitName];
export const WINDOW_NAMES = (Object.keys(LIMITS) as LimitName[]).filter((n): n is WindowName => LIMITS[n].per === "minute");

/** One limiter per per-minute limit: counted in Redis for a fleet where the declaration says so, else here. */
export type Windows = Record<WindowName, RateLimiter>;

/** The fleet's Redis, when there is one: its link and the prefix of every key. */
export type FleetCounting = { link: RedisLink; keyPrefix: string };

export function createWindows(settings: TrafficSettings, fleet: FleetCounting | null = null, now?: () => number): Windows {
  const windows = {} as Windows;
  for (const name of WINDOW_NAMES) {
    const limit = settings[name];
    const local = createWindowLimiter(now ? { limit, now } : { limit });
    if (!fleet || !LIMITS[name].fleet) windows[name] = local;
    else {
      const options = { name, limit, keyPrefix: fleet.keyPrefix };
      windows[name] = createSharedWindowLimiter(fleet.link, local, now ? Object.assign(options, { now }) : options);
    }
  }
  return windows;
}

/** The refusal of a host name whose minute is spent (`hostPerMinute`): for a fetch, and for a lookup's admission. */
export const hostSpent = (host: string, settings: TrafficSettings, retryAfterS: number): FetchRefusal =>
  refusal(
    "host_budget",
    `${host} has had the ${settings.hostPerMinute} requests a minute this resolver sends one site; try again in ${retryAfterS} s`,
    retryAfterS,
  );

/** Whose request a fetch is, and where it goes: the keys of the per-minute limits a fetch spends. */
export type FetchTarget = { host: string; address: string; client: string };

/**
 * Spends a fetch's per-minute budgets (docs/architecture.md#traffic): its host name's minute, its
 * address's minute, and its client's share of that address's minute. Answers the refusal when one is
 * spent; nothing is counted then unless the race of another instance took it meanwhile.
 */
export type FetchBudgets = (target: FetchTarget) => Promise<FetchRefusal | null>;

export function fetchBudgets(windows: Windows, settings: TrafficSettings): FetchBudgets {
  return async ({ host, address, client }) => {
    const [byHost, byAddress, share] = await Promise.all([
      windows.hostPerMinute.check(host),
      windows.addressPerMinute.check(address),
      windows.addressSharePerMinute.check(`${client} ${address}`),
    ]);
    const refused = firstRefused(host, address, settings, byHost, byAddress, share);
    if (refused) return refused;
    // Taken only when all three allow; a race lost to another instance meanwhile still refuses.
    const [share2, byHost2, byAddress2] = await Promise.all([
      windows.addressSharePerMinute.take(`${client} ${address}`),
      windows.hostPerMinute.take(host),
      windows.addressPerMinute.take(address),
    ]);
    return firstRefused(host, address, settings, byHost2, byAddress2, share2);
  };
}

function firstRefused(
  host: string,
  address: string,
  settings: TrafficSettings,
  byHost: RateDecision,
  byAddress: RateDecision,
  share: RateDecision,
): FetchRefusal | null {
  if (!byHost.ok) return hostSpent(host, settings, byHost.retryAfterS);
  if (!byAddress.ok) {
    const message = `the server of ${host} (${address}) has had the ${settings.addressPerMinute} requests a minute this resolver sends one address; try again in ${byAddress.retryAfterS} s`;
    return refusal("address_budget", message, byAddress.retryAfterS);
  }
  if (!share.ok) {
    const message = `your lookups have had their share (${settings.addressSharePerMinute} a minute) of the requests this resolver sends the server of ${host} (${address}); try again in ${share.retryAfterS} s`;
    return refusal("address_budget", message, share.retryAfterS);
  }
  return null;
}
