/**
 * Which runtime the package runs on (docs/library.md#runtimes): the guarded fetcher's address guard
 * is built on undici's connection settings, which hold on Node itself; Bun runs undici's `request`
 * on its own fetch and ignores them.
 */
export type Runtime = "node" | "bun" | "deno";

export const runtime = (): Runtime => (typeof process.versions.bun === "string" ? "bun" : "Deno" in globalThis ? "deno" : "node");

/** Why undici's guard cannot hold here, in words; null on Node. */
export function undiciGuardMissing(): string | null {
  const here = runtime();
  if (here === "node") return null;
  const name = here === "bun" ? "Bun" : "Deno";
  return `this fetcher's address guard cannot hold on ${name}, so it fetches nothing; createResolver and createPortableFetcher from ident-resolver/node guard addresses there`;
}
