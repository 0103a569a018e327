import { describe, expect, it } from "vitest";
import { createLogger, requestContext } from "./log";

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
    const log = createLogger("debug", (l) => lines.push(l));
    await requestContext.run({ id: "req-1" }, async () => {
      await Promise.resolve();
      log.debug("redis: slow");
    });
    log.debug("outside");
    expect(JSON.parse(lines[0]!)).toMatchObject({ request_id: "req-1", component: "redis" });
    expect(JSON.parse(lines[1]!)).not.toHaveProperty("request_id");
  });
});
