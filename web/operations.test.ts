import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { createLogger } from "ident-resolver/setup";
import { startOperations } from "./operations";

const metrics = async () => ({ text: "# TYPE ident_up gauge\nident_up 1\n", contentType: "text/plain; version=0.0.4" });

describe("the operators' listener (docs/deploying.md#metrics)", () => {
  it("answers GET /metrics and nothing else; off is no listener", async () => {
    const lines: string[] = [];
    const log = createLogger("info", (l) => lines.push(l));
    expect(await startOperations({ addr: null, metrics, log })).toBeNull();
    const server = await startOperations({ addr: { host: "127.0.0.1", port: 0 }, metrics, log });
    if (!server) throw new Error("not listening");
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const ok = await fetch(`${base}/metrics`);
      expect(ok.status).toBe(200);
      expect(ok.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await ok.text()).toContain("ident_up 1");
      expect((await fetch(`${base}/`)).status).toBe(404);
      expect((await fetch(`${base}/metrics`, { method: "POST" })).status).toBe(404);
      // A second instance on the same address: said in the log, and no listener; nothing thrown.
      expect(await startOperations({ addr: { host: "127.0.0.1", port: (server.address() as AddressInfo).port }, metrics, log })).toBeNull();
      expect(lines.map((l) => JSON.parse(l))).toEqual([
        expect.objectContaining({ level: "warn", component: "metrics", msg: expect.stringContaining("EADDRINUSE") }),
      ]);
    } finally {
      server.close();
    }
  });
});
