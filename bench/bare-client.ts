/**
 * The floor for cold fan-out (`npm run bench`): a bare client, in a process of its own, that fetches
 * the fan-out entity's documents with the most parallelism possible: the entity document, then all
 * 20 claim documents at once, each on a new TLS connection, and nothing else (no guard, no cache, no
 * parsing). The resolver's cold fan-out divided by this one's says what the resolver adds.
 *
 * It dials where an `IDENT_CONNECT_TO` value sends each name (docs/decisions.md#connect-to), for two
 * values in turn: each site on its own address, and every site on one address.
 *
 * Run by bench/run.ts: `node --import tsx bench/bare-client.ts` with a {@link BareInput} as JSON on
 * stdin; prints a {@link BareOutput} as JSON.
 */
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { matchConnectTo, parseConnectTo, type ConnectToEntry } from "ident-resolver/node";
import { median } from "./stats";

export type BareInput = { connectTo: { own: string; one: string }; caFile: string; runs: number; delayMs: number };
/**
 * Per case: the median of (fan-out − no claims) ÷ the delay, in round trips, the median fan-out in
 * ms, and the median time to fetch the entity document alone (no claims) in ms.
 */
export type BareOutput = Record<keyof BareInput["connectTo"], { ratio: number; fanMs: number; entityMs: number }>;

const input = JSON.parse(readFileSync(0, "utf8")) as BareInput;
const ca = readFileSync(input.caFile);

function entriesOf(value: string): ConnectToEntry[] {
  const parsed = parseConnectTo(value);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.entries;
}

/** One GET on a new connection to where `entries` send the URL's host, read to the end. */
function get(entries: readonly ConnectToEntry[], url: string): Promise<void> {
  const u = new URL(url);
  const to = matchConnectTo(entries, u.hostname, 443);
  if (!to?.host) return Promise.reject(new Error(`${u.hostname}: no connect-to address`));
  return new Promise((resolve, reject) => {
    const req = request(
      { host: to.host, port: to.port, path: u.pathname, servername: u.hostname, headers: { host: u.hostname }, ca, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`${url}: HTTP ${res.statusCode}`))));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function entityThenClaims(entries: readonly ConnectToEntry[], entity: string, claims: string[]): Promise<number> {
  const t0 = performance.now();
  await get(entries, entity);
  await Promise.all(claims.map((c) => get(entries, c)));
  return performance.now() - t0;
}

const claims = Array.from({ length: 10 }, (_, i) => [
  `https://p${i}.bench/ident-property.json`,
  `https://i${i}.bench/fan/ident-credential.json`,
]).flat();
const cases = { own: entriesOf(input.connectTo.own), one: entriesOf(input.connectTo.one) };
const runs = {
  own: { ratios: [] as number[], fans: [] as number[], empties: [] as number[] },
  one: { ratios: [] as number[], fans: [] as number[], empties: [] as number[] },
};
for (const entries of Object.values(cases)) await entityThenClaims(entries, "https://fan.bench/ident.json", claims); // warm-up
for (let i = 0; i < input.runs; i++) {
  // Alternated, as the resolver's runs are (bench/run.ts).
  for (const [name, entries] of Object.entries(cases) as [keyof typeof cases, ConnectToEntry[]][]) {
    const empty = await entityThenClaims(entries, "https://empty.bench/ident.json", []);
    const fan = await entityThenClaims(entries, "https://fan.bench/ident.json", claims);
    runs[name].ratios.push((fan - empty) / input.delayMs);
    runs[name].fans.push(fan);
    runs[name].empties.push(empty);
  }
}
const out: BareOutput = {
  own: { ratio: median(runs.own.ratios), fanMs: median(runs.own.fans), entityMs: median(runs.own.empties) },
  one: { ratio: median(runs.one.ratios), fanMs: median(runs.one.fans), entityMs: median(runs.one.empties) },
};
process.stdout.write(JSON.stringify(out));
