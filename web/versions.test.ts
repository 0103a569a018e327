/**
 * Versions worked out once (web/versions.ts, docs/decisions.md#page-cache): kept while their generation
 * reads the same and the clock is before their `until`, and shared by the requests that come while
 * one is being worked out.
 */
import { describe, expect, it, vi } from "vitest";
import { createVersions, SHARED_MS, type Version } from "./versions";

/** A version read of `text()` as it is when asked, answered when `release` is called; its calls counted. */
function slowVersion(text: () => string, until = Infinity) {
  const releases: (() => void)[] = [];
  const version = vi.fn(
    () =>
      new Promise<Version>((resolve) => {
        const now = text();
        releases.push(() => resolve({ text: now, until }));
      }),
  );
  return { version, release: () => releases.splice(0).forEach((r) => r()) };
}

describe("versions", () => {
  it("keeps a version whose generation stays the same (read from the index) however often the documents' moves", async () => {
    let documents = 1;
    let t = 0;
    const version = vi.fn(async (input: "home" | "answer") => ({ text: `${input} ${documents}`, until: 5_000 }));
    const versions = createVersions<"home" | "answer">({
      version,
      generation: (input) => (input === "answer" ? documents : 0),
      now: () => t,
    });
    const home = await versions("/", "home");
    for (let i = 0; i < 10; i++) {
      documents++;
      expect(await versions("/", "home")).toBe(home);
      await versions("/entity/a.example", "answer");
    }
    expect(version.mock.calls.filter(([input]) => input === "home")).toHaveLength(1);
    // Every move of the documents' generation asked the answer's again.
    expect(version.mock.calls.filter(([input]) => input === "answer")).toHaveLength(10);
    // Past its until, the home page's is worked out again, and shows what changed.
    t = 5_000;
    expect(await versions("/", "home")).not.toBe(home);
    expect(version.mock.calls.filter(([input]) => input === "home")).toHaveLength(2);
  });

  it("works a version out once for the requests that come while it is being worked out", async () => {
    const slow = slowVersion(() => "v1");
    const versions = createVersions<string>({ version: slow.version, generation: () => 0 });
    const asked = Array.from({ length: 50 }, () => versions("/", "home"));
    await new Promise((r) => setImmediate(r));
    expect(slow.version).toHaveBeenCalledTimes(1);
    slow.release();
    const digests = await Promise.all(asked);
    expect(new Set(digests).size).toBe(1);
    expect(digests[0]).not.toBeNull();
    // Another key is its own.
    const other = versions("/issuer/guild.example", "issuer");
    await new Promise((r) => setImmediate(r));
    expect(slow.version).toHaveBeenCalledTimes(2);
    slow.release();
    await other;
  });

  it("shares a version being worked out for SHARED_MS only: a read that hangs does not hold every later request", async () => {
    let t = 0;
    const slow = slowVersion(() => "v1");
    const versions = createVersions<string>({ version: slow.version, generation: () => 0, now: () => t });
    const first = versions("/", "home");
    t = SHARED_MS - 1;
    const joined = versions("/", "home");
    await new Promise((r) => setImmediate(r));
    expect(slow.version).toHaveBeenCalledTimes(1);
    t = SHARED_MS;
    const later = versions("/", "home");
    await new Promise((r) => setImmediate(r));
    expect(slow.version).toHaveBeenCalledTimes(2);
    slow.release();
    expect(new Set(await Promise.all([first, joined, later])).size).toBe(1);
  });

  it("keeps the later of two versions worked out at once, though the earlier one ends last", async () => {
    let t = 0;
    const answers: ((v: Version) => void)[] = [];
    const version = vi.fn(() => new Promise<Version>((resolve) => answers.push(resolve)));
    const versions = createVersions<string>({ version, generation: () => 0, now: () => t });
    const first = versions("/", "home");
    await new Promise((r) => setImmediate(r));
    t = SHARED_MS;
    const later = versions("/", "home");
    await new Promise((r) => setImmediate(r));
    expect(answers).toHaveLength(2);
    // The later read ends first; the one that hung ends after it, with what it read before.
    answers[1]?.({ text: "new", until: Infinity });
    const kept = await later;
    answers[0]?.({ text: "old", until: Infinity });
    expect(await first).not.toBe(kept);
    expect(await versions("/", "home")).toBe(kept);
    expect(version).toHaveBeenCalledTimes(2);
  });

  it("does not share a version worked out before the generation moved: the request after the move asks again", async () => {
    let generation = 1;
    let text = "v1";
    const slow = slowVersion(() => text);
    const versions = createVersions<string>({ version: slow.version, generation: () => generation });
    const before = versions("/entity/a.example", "a");
    await new Promise((r) => setImmediate(r));
    generation = 2;
    text = "v2";
    const after = versions("/entity/a.example", "a");
    await new Promise((r) => setImmediate(r));
    expect(slow.version).toHaveBeenCalledTimes(2);
    slow.release();
    expect(await after).not.toBe(await before);
    // The later one is kept: the next request asks nothing.
    expect(await versions("/entity/a.example", "a")).toBe(await after);
    expect(slow.version).toHaveBeenCalledTimes(2);
  });

  it("shares a version that cannot be worked out as none, and asks again on the next request", async () => {
    let fail = true;
    const version = vi.fn(async () => {
      if (fail) throw new Error("the index does not answer");
      return { text: "v1", until: Infinity };
    });
    const versions = createVersions<string>({ version, generation: () => 0 });
    expect(await Promise.all([versions("/", "home"), versions("/", "home")])).toEqual([null, null]);
    expect(version).toHaveBeenCalledTimes(1);
    fail = false;
    expect(await versions("/", "home")).not.toBeNull();
    expect(version).toHaveBeenCalledTimes(2);
  });

  it("without a generation, works every version out afresh", async () => {
    const version = vi.fn(async () => ({ text: "v1", until: Infinity }));
    const versions = createVersions<string>({ version });
    await Promise.all([versions("/", "home"), versions("/", "home")]);
    await versions("/", "home");
    expect(version).toHaveBeenCalledTimes(3);
  });
});
