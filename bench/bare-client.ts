/**
 * The floor for cold fan-out (`npm run bench`): a bare client, in a process of its own, that fetches
 * the fan-out entity's documents with the most parallelism possible: the entity document, then all
 * 20 claim documents at once, each on a new TLS connection, and nothing else (no guard, no cache, no
 * parsing). The resolver's cold fan-out divided by this one's says what the resolver adds.
 *
 * Run by bench/run.ts: `node --import tsx bench/bare-client.ts PORT CA_FILE RUNS DELAY_MS`; prints JSON.
 */
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { median } from "./stats";

const [port = "0", caFile = "", runs = "7", delay = "50"] = process.argv.slice(2);
const ca = readFileSync(caFile);

/** One GET on a new connection to the sample network, read to the end. */
function get(url: string): Promise<void> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: Number(port), path: u.pathname, servername: u.hostname, headers: { host: u.hostname }, ca, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`${url}: HTTP ${res.statusCode}`))));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function entityThenClaims(entity: string, claims: string[]): Promise<number> {
  const t0 = performance.now();
  await get(entity);
  await Promise.all(claims.map(get));
  return performance.now() - t0;
}

const claims = Array.from({ length: 10 }, (_, i) => [
  `https://p${i}.bench/ident-property.json`,
  `https://i${i}.bench/fan/ident-credential.json`,
]).flat();
await entityThenClaims("https://fan.bench/ident.json", claims); // warm-up
const ratios: number[] = [];
for (let i = 0; i < Number(runs); i++) {
  const empty = await entityThenClaims("https://empty.bench/ident.json", []);
  const fan = await entityThenClaims("https://fan.bench/ident.json", claims);
  ratios.push((fan - empty) / Number(delay));
}
process.stdout.write(JSON.stringify({ ratio: median(ratios) }));
