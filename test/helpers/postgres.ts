/**
 * A real PostgreSQL server for tests: Debian's binaries, a cluster made in a temporary folder, on a
 * loopback port, stopped and removed afterwards. Never the system's own service.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { atRunEnd, scratchDir } from "./scratch";

export type PostgresServer = {
  /** A URL for a new, empty database on the server. */
  database(name: string): Promise<string>;
  url: string;
  port: number;
  /** Stops the server and keeps its data, as an outage would. */
  pause(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  resume(): Promise<void>;
  stop(): Promise<void>;
};

/** The folder of Debian's PostgreSQL binaries (the newest installed), or null. */
export function postgresBin(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], "bin") : null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** The user the server runs as: PostgreSQL refuses to run as root. */
function runAs(): { uid: number; gid: number; prefix: string[] } {
  if (process.getuid?.() !== 0) return { uid: -1, gid: -1, prefix: [] };
  const line = spawnSync("getent", ["passwd", "postgres"], { encoding: "utf8" }).stdout.trim() || "nobody:x:65534:65534";
  const [, , uid = "65534", gid = "65534"] = line.split(":");
  return { uid: Number(uid), gid: Number(gid), prefix: ["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--"] };
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL's binaries are not installed (Debian's postgresql package); .ci/run installs them");
  const dir = scratchDir("ident-pg-");
  const data = path.join(dir, "data");
  const user = runAs();
  if (user.uid >= 0) chownSync(dir, user.uid, user.gid);
  const run = (cmd: string, args: string[]) => {
    const [exe, ...rest] = [...user.prefix, path.join(bin, cmd), ...args];
    return execFileSync(exe!, rest, { cwd: dir, stdio: "pipe", encoding: "utf8" });
  };
  const port = await freePort();
  run("initdb", ["-D", data, "-U", "ident", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"]);
  const start = () =>
    run("pg_ctl", [
      "-D",
      data,
      "-l",
      path.join(dir, "log"),
      "-w",
      "-o",
      `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`,
      "start",
    ]);
  start();
  const halt = () => {
    if (existsSync(path.join(data, "postmaster.pid"))) run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
  };
  // A run stopped half-way stops its server too, before its folder goes (test/helpers/scratch.ts).
  const forget = atRunEnd(halt);
  const url = `postgres://ident@127.0.0.1:${port}/postgres`;
  const { default: pg } = await import("pg");
  return {
    url,
    port,
    async database(name) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name}`);
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://ident@127.0.0.1:${port}/${name}`;
    },
    async pause() {
      run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
    },
    async resume() {
      start();
    },
    async stop() {
      forget();
      try {
        halt();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
