// HTTP read benchmark of the REST API, each endpoint beside two baselines measured in the same run:
// a bare Express route and a bare node:http server sending the very same bytes. The servers run in a
// child process (so the load generator does not share their event loop); autocannon drives them
// with 32 connections for BENCH_SECONDS (default 3) each.
//   npx tsx bench/api.ts          or          npm run bench -- api
//   BENCH_STORE=DIR: the API serves that published store through the lazy reader (as `npm start`)
import { fork } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import express from "express";
import { createApp } from "../api/app.ts";
import { ReaderSource } from "../api/resources/reader-source.ts";
import { createAccessLogger, createLogger } from "../jobs/logger.ts";
import { alignBenchmark, metricRows } from "../pipeline/analytics/index.ts";
import { metricsKey } from "../pipeline/store/model.ts";
import { SnapshotReader } from "../pipeline/store/snapshot-reader.ts";
import { readManifest } from "../pipeline/store/snapshots.ts";
import { buildCatalog, buildFixture, KEYS } from "../test/api/fixture.ts";
import { runIfMain } from "./script.ts";

const STOCKS = Number(process.env.BENCH_STOCKS ?? 500);
const YEARS = Number(process.env.BENCH_YEARS ?? 15);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = 32;

interface Target {
  name: string;
  path: string;
  api: string;
  express: string;
  http: string;
  bytes: number;
}

const listen = (server: http.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );

/** Child process: build the snapshot, start the API and, per endpoint, the two baselines. */
async function serve(): Promise<void> {
  const t0 = Date.now();
  const fx = buildFixture({ stocks: STOCKS, days: YEARS * 252, seed: 11, id: "bench" });
  const ticker = fx.snapshot.companies[0].ticker;
  // stored full-period metric rows for the measured ticker, as the pipeline would have written them
  const r = fx.snapshot.stockReturns.get(ticker)!;
  fx.snapshot.metrics.set(metricsKey("stock", ticker), metricRows(r, ticker));
  fx.snapshot.metrics.set(
    metricsKey("stock", ticker, "1"),
    metricRows(r, ticker, { name: "bench", returns: alignBenchmark(r.dates, fx.snapshot.benchmarks[0].levels) }),
  );
  const built = Date.now() - t0;
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  // As `npm start` serves: its loggers at info (into a sink instead of stdout), per-key rate limiting
  // in memory (with a limit the load cannot reach: every request pays for the check, none is refused).
  // BENCH_STORE=DIR: serve that published store through the lazy reader, as `npm start` does
  const store = process.env.BENCH_STORE;
  const lazy = store ? new ReaderSource(await SnapshotReader.open(store, readManifest(store)!.snapshotId)) : null;
  const app = createApp({
    snapshot: () => lazy ?? fx.snapshot,
    catalog: buildCatalog(fx),
    logger: createLogger("info", sink),
    accessLogger: createAccessLogger("info", sink),
    rateLimit: { points: 1e9, durationSec: 60 },
  });
  const apiPort = await listen(http.createServer(app));
  const paths: [string, string][] = [
    ["stock_ratings (50 items)", "/data/v1/stock_ratings?limit=50"],
    ["portfolio_holdings", `/data/v1/portfolio_holdings/${lazy ? lazy.reader.predefinedIds[0] : 101}`],
    [
      "stock_performance cumulative_return",
      `/data/v1/stock_performance/${lazy ? lazy.reader.companies[0].ticker : ticker}`,
    ],
    ["stock_metrics", `/data/v1/stock_metrics/${lazy ? lazy.reader.companies[0].ticker : ticker}`],
  ];
  const targets: Target[] = [];
  for (const [name, path] of paths) {
    const url = `http://127.0.0.1:${apiPort}${path}${path.includes("?") ? "&" : "?"}api_key=${KEYS.alice}`;
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    const body = Buffer.from(await res.arrayBuffer());
    const type = res.headers.get("content-type")!;
    const bare = express();
    bare.set("etag", false);
    bare.get("/", (_req, res2) => {
      res2.setHeader("Content-Type", type);
      res2.send(body);
    });
    const ePort = await listen(http.createServer(bare));
    const hPort = await listen(
      http.createServer((_req, res2) => {
        res2.writeHead(200, { "Content-Type": type, "Content-Length": body.length });
        res2.end(body);
      }),
    );
    targets.push({
      name,
      path,
      api: url,
      express: `http://127.0.0.1:${ePort}/`,
      http: `http://127.0.0.1:${hPort}/`,
      bytes: body.length,
    });
  }
  process.send!({
    targets,
    built,
    days: fx.dates.length,
    stocks: fx.snapshot.companies.length,
    store: store ? `published store ${store} through the lazy reader` : null,
  });
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
type Measured = { rps: number; p99: number; bad: number };
/** Median by throughput (p99 and errors from the same run). */
const median = (xs: Measured[]) => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)];

async function measure(url: string): Promise<Measured> {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, pipelining: 1 });
  const bad = r.non2xx + r.errors + r.timeouts;
  return { rps: r.requests.average, p99: r.latency.p99, bad };
}

export async function benchApi(): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ["--serve"], { execArgv: process.execArgv, stdio: "inherit" });
  try {
    const ready = await new Promise<{
      targets: Target[];
      built: number;
      days: number;
      stocks: number;
      store: string | null;
    }>((resolve, reject) => {
      child.once("message", (m) => resolve(m as never));
      child.once("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
    });
    const built = `snapshot of ${ready.stocks} stocks × ${ready.days} trading days (built in ${ready.built} ms)`;
    console.log(
      `\nREST API reads — ${ready.store ?? built}; ` +
        `${CONNECTIONS} connections, ${SECONDS} s per run, median of ${ROUNDS} interleaved ` +
        `runs, servers in one child process`,
    );
    const rows: string[][] = [
      ["endpoint", "server", "bytes", "req/s (median)", "p99 ms", "vs bare Express: median of rounds (min–max)"],
    ];
    for (const t of ready.targets) {
      await measure(t.api); // warm: first request builds and caches the body
      // This machine's throughput drifts by 2x between runs; interleaving the three servers over
      // ROUNDS rounds and taking medians compares them under the same conditions.
      const runs: { api: Measured[]; ex: Measured[]; raw: Measured[] } = { api: [], ex: [], raw: [] };
      for (let k = 0; k < ROUNDS; k++) {
        runs.api.push(await measure(t.api));
        runs.ex.push(await measure(t.express));
        runs.raw.push(await measure(t.http));
      }
      const api = median(runs.api),
        ex = median(runs.ex),
        raw = median(runs.raw);
      // The ratio is the median of each round's own ratio: the two runs of one round are seconds
      // apart, so they share the machine's conditions far better than the two medians do.
      const paired = (xs: Measured[]) => {
        const r = xs.map((x, k) => x.rps / runs.ex[k].rps).sort((a, b) => a - b);
        return `${r[Math.floor(r.length / 2)].toFixed(2)}× (${r[0].toFixed(2)}–${r[r.length - 1].toFixed(2)})`;
      };
      const fmt = (label: string, m: Measured, ratio: string) => [
        t.name,
        label + (m.bad ? ` (${m.bad} errors)` : ""),
        String(t.bytes),
        Math.round(m.rps).toLocaleString("en-US"),
        String(m.p99),
        ratio,
      ];
      rows.push(
        fmt("api", api, paired(runs.api)),
        fmt("bare express", ex, "1.00×"),
        fmt("bare node:http", raw, paired(runs.raw)),
      );
    }
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    for (const r of rows)
      console.log(r.map((c, i) => (i >= 2 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  "));
  } finally {
    child.kill();
  }
}

await runIfMain(import.meta.url, serve, benchApi);
