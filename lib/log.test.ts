import { AsyncLocalStorage } from "node:async_hooks";
import { describe, expect, it } from "vitest";
import { createLogger, MAX_LINE_BYTES } from "./log.ts";

describe("structured logs (docs/deploying.md#logs)", () => {
  it("one JSON line per event, with its level and component, and nothing below the level", () => {
    const lines: string[] = [];
    const log = createLogger("warn", (l) => lines.push(l));
    log.info("store: quiet");
    log.warn('store: the database does not answer\n"quoted"', { backlog: 2 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("\n");
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: "warn",
      component: "store",
      msg: 'store: the database does not answer\n"quoted"',
      backlog: 2,
    });
  });
  it("a line written during a request carries its id", async () => {
    const lines: string[] = [];
    // As the web app gives it: the id of the request whose async context the line is written in.
    const requests = new AsyncLocalStorage<{ id: string }>();
    const log = createLogger(
      "debug",
      (l) => lines.push(l),
      () => requests.getStore()?.id,
    );
    await requests.run({ id: "req-1" }, async () => {
      await Promise.resolve();
      log.debug("redis: slow");
    });
    log.debug("outside");
    expect(JSON.parse(lines[0]!)).toMatchObject({ request_id: "req-1", component: "redis" });
    expect(JSON.parse(lines[1]!)).not.toHaveProperty("request_id");
  });
});

describe("a line is never over 1 KiB (docs/deploying.md#logs)", () => {
  const lines: string[] = [];
  const log = createLogger("debug", (l) => lines.push(l));
  it.each([
    ["a 16 KB path", "request", { path: `/${"a".repeat(16_000)}`, status: 404 }],
    ["a 16 KB message", `store: ${"é".repeat(16_000)}`, {}],
    ["many long fields", "request", Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field${i}`, "x".repeat(300)]))],
    ["a field name of 10 KB", "request", { ["k".repeat(10_000)]: 1 }],
    ["an object value", "request", { value: { deep: "y".repeat(5000) } }],
  ] as const)("%s: one line of at most 1,024 bytes, still JSON", (_, message, fields) => {
    lines.length = 0;
    log.info(message, fields);
    expect(lines).toHaveLength(1);
    expect(Buffer.byteLength(lines[0]!)).toBeLessThanOrEqual(MAX_LINE_BYTES);
    const parsed = JSON.parse(lines[0]!);
    expect(parsed).toMatchObject({ level: "info", time: expect.any(String) });
    expect(typeof parsed.msg === "string" || parsed.cut === true).toBe(true);
  });
  it("a short line is written whole; a cut field says where with …", () => {
    lines.length = 0;
    log.info("request", { path: "/entity/alice.example", status: 200 });
    log.info("request", { path: `/${"b".repeat(400)}` });
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: "request", path: "/entity/alice.example", status: 200 });
    expect(JSON.parse(lines[1]!).path).toMatch(/^\/b{255}…$/);
  });
  it("fields cannot overwrite the line's own time, level or message", () => {
    lines.length = 0;
    log.warn("store: real", { level: "debug", msg: "forged", time: "never" });
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "warn", msg: "store: real" });
    expect(JSON.parse(lines[0]!).time).not.toBe("never");
  });
});
