/**
 * Lookups in progress (lib/resolver/in-progress.ts, docs/deploying.md#upgrading-without-losing-results):
 * each counted until it has ended and been recorded, so that a stopping process waits for them.
 */
import { describe, expect, it } from "vitest";
import type { EntityResult, SearchResponse } from "../result/record.ts";
import type { Resolver, StagedEntity } from "./index.ts";
import { lookupsInProgress } from "./in-progress.ts";

/** A promise and the hand that settles it. */
function later<T>() {
  let settle: (value: T) => void = () => undefined;
  let fail: (err: Error) => void = () => undefined;
  const promise = new Promise<T>((resolve, reject) => ((settle = resolve), (fail = reject)));
  return { promise, settle, fail };
}

/** A resolver whose staged entity is answered at once and whose whole result (its record) comes when told. */
function fakeResolver() {
  const whole = later<EntityResult>();
  const answer = later<SearchResponse>();
  const staged = { result: whole.promise } as unknown as StagedEntity;
  const resolver = {
    resolveEntityStaged: async () => staged,
    resolve: () => answer.promise,
    resolveEntity: () => whole.promise,
    search: async () => ({ ok: false, error: { code: "invalid_query", message: "x" } }),
  } as unknown as Resolver;
  return { resolver, whole, answer };
}

describe("lookupsInProgress", () => {
  it("a staged lookup is in progress until its whole result is recorded, though its caller had its answer long before", async () => {
    const { resolver, whole } = fakeResolver();
    const lookups = lookupsInProgress(resolver);
    await lookups.resolver.resolveEntityStaged("alice.example");
    expect(await lookups.finish(20)).toBe(1);
    const finished = lookups.finish(5000);
    whole.settle({} as EntityResult);
    expect(await finished).toBe(0);
  });
  it("waits for lookups started while it waits, and counts one that failed as ended", async () => {
    const { resolver, whole, answer } = fakeResolver();
    const lookups = lookupsInProgress(resolver);
    void lookups.resolver.resolve({ input: "a.example", kind: "domain", domain: "a.example" }).catch(() => undefined);
    const finished = lookups.finish(5000);
    void lookups.resolver.resolveEntity("b.example");
    answer.fail(new Error("the database is gone"));
    await new Promise((r) => setTimeout(r, 10));
    whole.settle({} as EntityResult);
    expect(await finished).toBe(0);
  });
  it("nothing in progress: answers at once", async () => {
    expect(await lookupsInProgress(fakeResolver().resolver).finish(60_000)).toBe(0);
  });
});
