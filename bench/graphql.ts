// GraphQL read benchmark: stockRatings(first: 50) asking for the very fields of the REST list,
// beside GET /data/v1/stock_ratings?limit=50 on the same server, interleaved over BENCH_ROUNDS
// rounds (median of each round's own ratio; this machine's throughput drifts between runs).
//   npx tsx bench/graphql.ts          or          npm run bench -- graphql
import { fork } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { createApp } from "../api/app.ts";
import { createAccessLogger, createLogger } from "../jobs/logger.ts";
import { buildCatalog, buildFixture, KEYS } from "../test/api/fixture.ts";
import { runIfMain } from "./script.ts";

const STOCKS = Number(process.env.BENCH_STOCKS ?? 500);
const YEARS = Number(process.env.BENCH_YEARS ?? 15);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 32;

/** The REST list's fields (contract §4), sector and industry by name as REST gives them. */
export const STOCK_RATINGS_QUERY = `query Top($first: Int) { stockRatings(first: $first) { edges { node {
  date stock { id ticker name marketCap sector { name } industry { name } }
  totalRating returnRating growthRating riskRating valuationRating technicalRating macroRating } } } }`;

interface Ready {
  port: number;
  /** the same app without the GraphQL response cache */
  uncachedPort: number;
  built: number;
  stocks: number;
}

async function serve(): Promise<void> {
  const t0 = Date.now();
  const fx = buildFixture({ stocks: STOCKS, days: YEARS * 252, seed: 11, id: "bench" });
  const built = Date.now() - t0;
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  // as `npm start` serves: its loggers into a sink, an in-memory rate limit the load cannot reach
  const app = (graphqlResponseCache: boolean) =>
    createApp({
      snapshot: () => fx.snapshot,
      catalog: buildCatalog(fx),
      logger: createLogger("info", sink),
      accessLogger: createAccessLogger("info", sink),
      rateLimit: { points: 1e9, durationSec: 60 },
      graphqlResponseCache,
    });
  const listen = (server: http.Server) =>
    new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
    );
  const port = await listen(http.createServer(app(true)));
  const uncachedPort = await listen(http.createServer(app(false)));
  process.send!({ port, uncachedPort, built, stocks: fx.snapshot.companies.length } satisfies Ready);
}

type Measured = { rps: number; p99: number; bad: number };
const median = (xs: Measured[]) => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)];

async function measure(opts: autocannon.Options): Promise<Measured> {
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, pipelining: 1, ...opts });
  return { rps: r.requests.average, p99: r.latency.p99, bad: r.non2xx + r.errors + r.timeouts };
}

export async function benchGraphql(): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ["--serve"], { execArgv: process.execArgv, stdio: "inherit" });
  try {
    const ready = await new Promise<Ready>((resolve, reject) => {
      child.once("message", (m) => resolve(m as Ready));
      child.once("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
    });
    const base = `http://127.0.0.1:${ready.port}`;
    const rest: autocannon.Options = { url: `${base}/data/v1/stock_ratings?limit=50&api_key=${KEYS.alice}` };
    const body = JSON.stringify({ query: STOCK_RATINGS_QUERY, variables: { first: 50 } });
    const gql: autocannon.Options = {
      url: `${base}/graphiql`,
      method: "POST",
      headers: { "content-type": "application/json", api_key: KEYS.alice },
      body,
    };
    const uncached: autocannon.Options = { ...gql, url: `http://127.0.0.1:${ready.uncachedPort}/graphiql` };
    // same items both ways (checked once, outside the timing)
    const restItems = (await (await fetch(rest.url as string)).json()) as {
      stock: { ticker: string };
      totalRating: string;
    }[];
    const g = (await (
      await fetch(gql.url as string, { method: "POST", headers: gql.headers as Record<string, string>, body })
    ).json()) as {
      data: { stockRatings: { edges: { node: { stock: { ticker: string }; totalRating: string } }[] } };
    };
    const same =
      JSON.stringify(g.data.stockRatings.edges.map((e) => [e.node.stock.ticker, e.node.totalRating])) ===
      JSON.stringify(restItems.map((i) => [i.stock.ticker, i.totalRating]));
    if (!same) throw new Error("GraphQL and REST answered different items");
    console.log(
      `\nGraphQL vs REST — stockRatings(first: 50) with the REST list's fields vs GET ` +
        `/data/v1/stock_ratings?limit=50; ` +
        `${ready.stocks} stocks (built in ${ready.built} ms); ${CONNECTIONS} connections, ${SECONDS} s per ` +
        `run, ${ROUNDS} interleaved rounds`,
    );
    for (const o of [rest, gql, uncached]) await measure(o); // warm
    const runs = { rest: [] as Measured[], gql: [] as Measured[], uncached: [] as Measured[] };
    for (let k = 0; k < ROUNDS; k++) {
      runs.rest.push(await measure(rest));
      runs.gql.push(await measure(gql));
      runs.uncached.push(await measure(uncached));
    }
    const ratio = (xs: Measured[]) => {
      const rs = xs.map((x, k) => x.rps / runs.rest[k].rps).sort((a, b) => a - b);
      const mid = rs[Math.floor(rs.length / 2)];
      return `${mid.toFixed(2)}× of REST (rounds ${rs[0].toFixed(2)}–${rs.at(-1)!.toFixed(2)})`;
    };
    const r = median(runs.rest);
    const row = (name: string, m: Measured, ratio: string) =>
      `${name.padEnd(28)} ${Math.round(m.rps).toLocaleString("en-US").padStart(8)} req/s  ` +
      `p99 ${String(m.p99).padStart(4)} ms  ${ratio}${m.bad ? `  (${m.bad} errors)` : ""}`;
    console.log(row("REST stock_ratings", r, "1.00×"));
    console.log(row("GraphQL stockRatings", median(runs.gql), `${ratio(runs.gql)}; target ≥ 0.70`));
    console.log(row("  without response cache", median(runs.uncached), ratio(runs.uncached)));
  } finally {
    child.kill();
  }
}

await runIfMain(import.meta.url, serve, benchGraphql);
