/** The server's Node flags (scripts/server-flags.js) are the ones `npm start`, `npm run dev` and the service file pass. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SERVER_NODE_FLAGS } from "./server-flags.js";

const scripts = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> })
  .scripts;

describe("the server's Node flags (docs/decisions.md#memory)", () => {
  it.each(["start", "dev"])("npm run %s starts web/serve.js with each of them", (name) => {
    const script = scripts[name] ?? "";
    expect(script).toMatch(/^node .*web\/serve\.js/);
    for (const flag of SERVER_NODE_FLAGS) expect(script.split(" web/serve.js")[0]?.split(" ")).toContain(flag);
  });
  it("the service file (deploy/ident@.service) starts web/serve.js with each of them", () => {
    const unit = readFileSync(new URL("../deploy/ident@.service", import.meta.url), "utf8");
    const start = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? "";
    expect(start).toMatch(/^\/usr\/bin\/node .*web\/serve\.js$/);
    for (const flag of SERVER_NODE_FLAGS) expect(start.split(" ")).toContain(flag);
  });
});
