/**
 * What a fetch spends (docs/architecture.md#traffic), as types alone: the fetcher names them without
 * the limiters, and so without Redis's types (docs/library.md#the-package).
 */
import type { FetchRefusal } from "./refusal.ts";

/** Whose request a fetch is, and where it goes: the keys of the per-minute limits a fetch spends. */
export type FetchTarget = { host: string; address: string; client: string };

/**
 * Spends a fetch's windowed budgets (docs/architecture.md#traffic): its host name's minute, its
 * client's share of it, its address's minute, its client's share of that, and the 10 s that spread
 * the address's minute. All are taken together or none is: a refused fetch spends nothing, and no
 * other fetch counts in between (in a fleet, one Redis script decides them). Answers the refusal of
 * the first one spent.
 */
export type FetchBudgets = (target: FetchTarget) => Promise<FetchRefusal | null>;
