#!/usr/bin/env node
// `npm run demo`: builds if needed, starts the sample network and the app pointed at it, and
// prints the URL and a few queries to try. Ctrl-C stops both.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildOnce } from "./build-once.js";
import { SERVER_NODE_FLAGS } from "./server-flags.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const port = process.env.PORT ?? "3000";
buildOnce(root, "demo");

const { register } = await import("tsx/esm/api");
register();
const { spawnSampleNetwork } = await import("../test/network/spawn.ts");
const net = await spawnSampleNetwork();
// Discovery starts from these and finds the rest of the sample network's people and organisations
// (docs/decisions.md#discovery): a name search finds them a few seconds after start.
const SEEDS = "alice.example,acme.example,carol.example,hartley-law.example,mallory.example,press.example,weekly-dispatch.example";
const app = spawn(process.execPath, [...SERVER_NODE_FLAGS, path.join(root, "web", "serve.js")], {
  cwd: root,
  stdio: ["ignore", "inherit", "inherit"],
  env: { IDENT_CRAWL_SEEDS: SEEDS, ...process.env, ...net.env, PORT: port },
});

const base = `http://localhost:${port}`;
if (process.argv.includes("--quiet")) {
  // Used by the browser tests: no banner.
} else {
  const q = (s) => `${base}/search?q=${encodeURIComponent(s)}`;
  console.log(`
ident resolver demo on the sample network (each publisher on its own loopback address)

  ${base}/
  ${q("alice.example")}            a person, all claims verified
  ${base}/entity/acme.example      an organisation's shareable page
  ${q("§:property:jointventure.example")}   a property with three owners
  ${q("@alice@guild.example/members")}   a credential
  ${q("mallory.example")}          one broken claim of each kind
  ${q("dana.test")}                published only as HTML embeds
  ${q("makers guild")}             a name search over the index, which discovery fills from the seeds
  ${base}/issuer/guild.example     the credentials an issuer has, as far as the index knows

Change the sample network while it runs, and see a claim turn (Re-check with ?refresh=1):
  curl --cacert ${net.env.NODE_EXTRA_CA_CERTS} --connect-to control.sample.test:443:127.0.0.1:${net.connectToOne.split(":").pop()} \\
    -X POST https://control.sample.test/sites/blog.alice.example -d '{"down": true}'
  (-X DELETE on the same URL puts the site back)

CLI on the same network:
  IDENT_CONNECT_TO=${net.connectToOne} NODE_EXTRA_CA_CERTS=${net.env.NODE_EXTRA_CA_CERTS} npx ident resolve alice.example
`);
}

let stopping = false;
const stop = async (code) => {
  if (stopping) return;
  stopping = true;
  app.kill("SIGTERM");
  await net.stop();
  process.exit(code);
};
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));
app.on("exit", (code) => void stop(code ?? 0));
