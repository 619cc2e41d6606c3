// Part of `npm run bench -- catalog`: two API processes (`npm start`'s entry, test/deploy/replicas.ts)
// on one PostgreSQL catalog vs one, under a write-heavy HTTP mix on loopback. CLIENTS clients, each
// with its own user, key and watchlist, send one request after another: 80 % GraphQL watchlist
// mutations (add a ticker, remove it, change the description), 20 % REST reads of the watchlist.
// One process: every client on the first; two: the clients alternate between them. Each phase stops
// at REQUESTS requests or SECONDS seconds, whichever comes first; every answer is checked.
import { mkdtempSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { PgCatalog } from "../pipeline/store/catalog/catalog.ts";
import { freePort, type Proc, startApi } from "../test/deploy/replicas.ts";
import { writeTinySource } from "../test/fixtures/tiny-source.ts";

const CLIENTS = 16;
const REQUESTS = 4_000;
const SECONDS = 10;
const WARMUP = 200;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

interface Client {
  key: string;
  watchlist: string;
}

const MUTATIONS = [
  'mutation($w: ID!) { addToWatchlist(input: {watchlistId: $w, stockTickers: ["DDD"]}) { success } }',
  'mutation($w: ID!) { removeFromWatchlist(input: {watchlistId: $w, stockTickers: ["DDD"]}) { success } }',
  "mutation($w: ID!, $d: String) { updateWatchlist(input: {watchlistId: $w, description: $d}) { success } }",
];

/** The i-th request of a client: every fifth a REST read, the others the mutations in turn. */
async function request(base: string, c: Client, i: number): Promise<void> {
  const headers = { api_key: c.key, "content-type": "application/json" };
  if (i % 5 === 4) {
    const r = await fetch(`${base}/data/v1/watchlists/${c.watchlist}`, { headers });
    const body = await r.json();
    if (r.status !== 200 || body.id !== c.watchlist) throw new Error(`read: ${r.status} ${JSON.stringify(body)}`);
    return;
  }
  const m = i - Math.floor(i / 5);
  const query = MUTATIONS[m % 3];
  const r = await fetch(`${base}/graphiql`, {
    method: "POST",
    headers,
    body: JSON.stringify({ query, variables: { w: c.watchlist, d: `d${i}` } }),
  });
  const body = await r.json();
  const payload = body.data && Object.values(body.data)[0];
  if (r.status !== 200 || !(payload as { success?: boolean })?.success)
    throw new Error(`mutation: ${r.status} ${JSON.stringify(body)}`);
}

async function phase(bases: string[], clients: Client[], limit: number, seconds: number) {
  const lat: number[] = [];
  let issued = 0;
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (c, k) => {
      const base = bases[k % bases.length];
      for (let i = 0; issued < limit && performance.now() < until; i++) {
        issued++;
        const t = performance.now();
        await request(base, c, i);
        lat.push(performance.now() - t);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  return { n: lat.length, perSec: lat.length / secs, p50: pct(lat, 0.5), p99: pct(lat, 0.99) };
}

async function seed(url: string): Promise<Client[]> {
  const c = await PgCatalog.open(url);
  const clients: Client[] = [];
  for (let u = 0; u < CLIENTS; u++) {
    const user = await c.createUser({ email: `h${u}@example.com`, firstName: "H", lastName: `${u}`, phoneNumber: "" });
    const { key } = await c.createKey(user.id, ["watchlists:read", "watchlists:write"]);
    const w = await c.createWatchlist(user.id, { name: `w${u}`, tickers: ["AAA", "BBB"] });
    clients.push({ key, watchlist: String(w.id) });
  }
  await c.close();
  return clients;
}

/** Prints the two phases' throughput and latency; `url` is a fresh PostgreSQL database. */
export async function benchCatalogHttp(url: string): Promise<void> {
  const clients = await seed(url);
  const dataDir = mkdtempSync(join(tmpdir(), "bench-catalog-http-"));
  const sourceDir = writeTinySource();
  const apis: Proc[] = [];
  const bases: string[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      // Limits far above the load: the bench measures the catalog path, not the 429s.
      const env = { RATE_LIMIT_PER_MINUTE: "100000000", GRAPHQL_COST_PER_MINUTE: "100000000", LOG_LEVEL: "warn" };
      apis.push(
        await startApi({ port, dataDir, databaseUrl: url, sourceDir, demoKey: "bench-demo-key-0123456789", env }),
      );
      bases.push(`http://127.0.0.1:${port}`);
    }
    await phase(bases, clients, WARMUP, SECONDS);
    console.log(
      `API processes on PostgreSQL over HTTP: ${CLIENTS} clients, 80 % GraphQL watchlist mutations, 20 % REST reads, ` +
        `up to ${REQUESTS} requests or ${SECONDS} s; load average ${loadavg()[0].toFixed(1)}`,
    );
    console.log("processes | requests | requests/s | p50 ms | p99 ms");
    for (const n of [1, 2]) {
      const r = await phase(bases.slice(0, n), clients, REQUESTS, SECONDS);
      console.log(`${n} | ${r.n} | ${r.perSec.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)}`);
    }
    console.log(`  load average after: ${loadavg()[0].toFixed(1)}`);
  } finally {
    for (const a of apis) await a.stop();
  }
}
