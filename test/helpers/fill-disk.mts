/**
 * Run by test/integration/disk-full.test.ts inside a user and mount namespace of its own, on a small
 * tmpfs at argv[2]: records results until the disk is full and past it, frees space, and says on
 * stdout, one JSON line per step, what the store did. Never run on a real disk.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync, unlinkSync, mkdirSync } from "node:fs";
import path from "node:path";
import { openStore } from "../../lib/store/index.ts";

const root = process.argv[2];
if (!root) throw new Error("fill-disk.mts takes the tmpfs folder");
const say = (fact: Record<string, unknown>) => console.log(JSON.stringify(fact));
const filler = path.join(root, "filler");
mkdirSync(path.join(root, "data"), { recursive: true });
// Freed later: more than a WAL segment (16 MB), so that the engine can write again.
writeFileSync(filler, Buffer.alloc(48 * 1024 * 1024));
const lines: string[] = [];
const store = await openStore({ kind: "embedded", dataDir: path.join(root, "data") }, (l) => lines.push(l));
const result = (i: number) => ({
  entity: {
    status: "accepted" as const,
    domain: `d${i}.example`,
    network_id: `§:entity:d${i}.example`,
    entity_type: "person" as const,
    // Random text does not compress: each result takes its size on the disk.
    details: { name: `D ${i}`, description: randomBytes(150_000).toString("base64") },
    problems: [],
  },
  properties: [],
  credentials: [],
  connections: [],
  jsonld: null,
  cache: { fetched_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), stale: false },
});
let answered = 0;
let past = 0;
for (let i = 0; i < 2000 && past < 20; i++) {
  await store.record(result(i));
  answered++;
  if (store.state() === "no space") past++;
}
say({ step: "full", answered, state: store.state(), backlog: store.backlog, dropped: store.dropped });
unlinkSync(filler);
for (let i = 0; i < 600 && (store.backlog > 0 || store.state() !== "running"); i++) await new Promise((r) => setTimeout(r, 100));
say({ step: "waited", state: store.state(), backlog: store.backlog, lines: lines.slice(-3) });
const [row] = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM entities WHERE domain LIKE 'd%'");
say({ step: "freed", recorded: row?.n, state: store.state(), backlog: store.backlog, dropped: store.dropped });
await store.close();
// A start on a disk with no room at all.
try {
  for (let i = 0; ; i++) writeFileSync(path.join(root, `all${i}`), Buffer.alloc(4 * 1024 * 1024));
} catch {
  // full
}
try {
  const again = await openStore({ kind: "embedded", dataDir: path.join(root, "fresh") }, () => undefined);
  await again.close();
  say({ step: "start", opened: true });
} catch (err) {
  say({ step: "start", opened: false, message: (err as Error).message });
}
say({ step: "log", lines: lines.filter((l) => /disk is full|recorded again/.test(l)) });
