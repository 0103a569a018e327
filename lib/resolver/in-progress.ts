/**
 * The lookups a resolver has in progress, until each has ended and been annotated (recorded, where
 * there is an index): so that a process that stops waits for them, and a lookup whose client went
 * away is recorded all the same (docs/deploying.md#upgrading-without-losing-results).
 */
import { extend } from "../objects.ts";
import { isRefusal } from "../traffic/refusal.ts";
import type { Resolver } from "./index.ts";

export type LookupsInProgress = {
  /** The same resolver, each lookup it starts counted until it has ended. */
  resolver: Resolver;
  /** Waits up to `timeoutMs` for every lookup in progress to end; how many still run then. */
  finish(timeoutMs: number): Promise<number>;
};

type Counted = Pick<Resolver, "search" | "resolve" | "resolveEntity" | "resolveEntityStaged">;

export function lookupsInProgress(resolver: Resolver): LookupsInProgress {
  const running = new Set<Promise<unknown>>();
  const hold = (ended: Promise<unknown>) => {
    const held = ended.then(
      () => undefined,
      () => undefined,
    );
    running.add(held);
    void held.then(() => running.delete(held));
  };
  /** `start`, its lookup held until `whole` of its answer has settled. */
  const counted =
    <A extends unknown[], T>(start: (...args: A) => Promise<T>, whole: (answer: T) => unknown = (answer) => answer) =>
    (...args: A): Promise<T> => {
      const answer = start(...args);
      hold(answer.then(whole));
      return answer;
    };
  return {
    resolver: extend<Resolver, Counted>(resolver, {
      search: counted(resolver.search),
      resolve: counted(resolver.resolve),
      resolveEntity: counted(resolver.resolveEntity),
      // Answered once the entity is in; the lookup ends with its last claim, and its record.
      resolveEntityStaged: counted(resolver.resolveEntityStaged, (staged) => (isRefusal(staged) ? staged : staged.result)),
    }),
    async finish(timeoutMs) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const out = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
      // Lookups that start meanwhile are waited for too: the set is read again each round.
      while (running.size > 0 && (await Promise.race([Promise.all(running).then(() => true), out]))) continue;
      clearTimeout(timer);
      return running.size;
    },
  };
}
