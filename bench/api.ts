// HTTP read benchmark of the API's response cache and node:http fast path (api/fast/), every
// figure beside its baselines measured in the same run, interleaved over BENCH_ROUNDS rounds:
//   1. cached REST: GET /data/v1/stock_ratings?limit=50&order_by=-total_rating answered by the
//      fast path, vs the same request through Express (the server with the fast path off: main's
//      path), vs a bare Express route and a bare node:http server sending the very same bytes;
//   2. GraphQL: the REST list's fields as an automatic persisted query sent by GET (the fast path)
//      vs the cached REST read;
//   3. uncached reads (routes the cache never holds: a portfolio's holdings, the caller's
//      watchlists) on the server with the fast path vs the one without it (main's behaviour).
// The servers run in a child process, so the load generator does not share their event loop.
// The load generator is wrk (1 thread) when installed, else autocannon; 32 connections,
// BENCH_SECONDS (default 3) per run.
//   npx tsx bench/api.ts          or          npm run bench -- api
//   BENCH_STORE=DIR: the API serves that published store through the lazy reader (as `npm start`)
import { type ChildProcess, execFile, execFileSync, fork } from "node:child_process";
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import autocannon from "autocannon";
import express from "express";
import type { AppDeps } from "../api/app.ts";
import { ReaderSource } from "../api/resources/reader-source.ts";
import { startServer } from "../api/server.ts";
import { createAccessLogger, createLogger } from "../jobs/logger.ts";
import { SnapshotReader } from "../pipeline/store/read/snapshot-reader.ts";
import { readManifest } from "../pipeline/store/snapshot/snapshots.ts";
import { buildCatalog, buildFixture, KEYS } from "../test/api/fixture.ts";
import { STOCK_RATINGS_QUERY } from "./graphql.ts";
import { runIfMain, serverNodeFlags } from "./script.ts";

const STOCKS = Number(process.env.BENCH_STOCKS ?? 500);
const YEARS = Number(process.env.BENCH_YEARS ?? 15);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 32;
const RATINGS = "/data/v1/stock_ratings?limit=50&order_by=-total_rating";

/** One measured target: a URL and the headers each request sends. */
interface Target {
  url: string;
  headers?: Record<string, string>;
}

interface Ready {
  targets: Record<string, Target>;
  bytes: number;
  built: number;
  days: number;
  stocks: number;
}

const listen = (server: http.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );

/** Child process: the snapshot, the API with and without the fast path, and the two bare baselines. */
async function serve(): Promise<void> {
  const t0 = Date.now();
  const fx = buildFixture({ stocks: STOCKS, days: YEARS * 252, seed: 11, id: "bench" });
  const built = Date.now() - t0;
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  // As `npm start` serves: its loggers at info (into a sink instead of stdout), per-key rate limiting
  // in memory with a limit the load cannot reach (every request pays for the check, none is refused).
  // BENCH_STORE=DIR: serve that published store through the lazy reader, as `npm start` does
  const store = process.env.BENCH_STORE;
  const lazy = store ? new ReaderSource(await SnapshotReader.open(store, readManifest(store)!.snapshotId)) : null;
  const deps = (extra: Partial<AppDeps>): AppDeps => ({
    snapshot: () => lazy ?? fx.snapshot,
    catalog: buildCatalog(fx),
    logger: createLogger("info", sink),
    accessLogger: createAccessLogger("info", sink),
    rateLimit: { points: 1e9, durationSec: 60 },
    graphqlCostPerMinute: 1e12,
    ...extra,
  });
  const fast = await startServer({ port: 0, host: "127.0.0.1", deps: deps({}) });
  const main = await startServer({ port: 0, host: "127.0.0.1", deps: deps({ responseCacheBytes: 0 }) });
  const key = `api_key=${KEYS.alice}`;
  const res = await fetch(`${fast.url}${RATINGS}&${key}`);
  if (res.status !== 200) throw new Error(`${RATINGS}: ${res.status} ${await res.text()}`);
  const body = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get("content-type")!;
  const bare = express();
  bare.set("etag", false);
  bare.get("/", (_req, r) => {
    r.setHeader("Content-Type", type);
    r.send(body);
  });
  const ePort = await listen(http.createServer(bare));
  const hPort = await listen(
    http.createServer((_req, r) => {
      r.writeHead(200, { "Content-Type": type, "Content-Length": body.length });
      r.end(body);
    }),
  );
  // the persisted query: registered once (POST with its text and hash), then sent by hash over GET
  const hash = createHash("sha256").update(STOCK_RATINGS_QUERY).digest("hex");
  const extensions = { persistedQuery: { version: 1, sha256Hash: hash } };
  const gqlHeaders = { api_key: KEYS.alice, accept: "application/json" };
  const reg = await fetch(`${fast.url}/graphiql`, {
    method: "POST",
    headers: { ...gqlHeaders, "content-type": "application/json" },
    body: JSON.stringify({ query: STOCK_RATINGS_QUERY, variables: { first: 50 }, extensions }),
  });
  if (reg.status !== 200) throw new Error(`persisted query: ${reg.status} ${await reg.text()}`);
  const apq =
    `/graphiql?variables=${encodeURIComponent(JSON.stringify({ first: 50 }))}` +
    `&extensions=${encodeURIComponent(JSON.stringify(extensions))}`;
  const holdings = lazy ? lazy.reader.predefinedIds[0] : 101;
  const targets: Record<string, Target> = {
    fast: { url: `${fast.url}${RATINGS}&${key}` },
    express: { url: `${main.url}${RATINGS}&${key}` },
    bareExpress: { url: `http://127.0.0.1:${ePort}/` },
    bareHttp: { url: `http://127.0.0.1:${hPort}/` },
    apq: { url: `${fast.url}${apq}`, headers: gqlHeaders },
    holdingsFast: { url: `${fast.url}/data/v1/portfolio_holdings/${holdings}?${key}` },
    holdingsMain: { url: `${main.url}/data/v1/portfolio_holdings/${holdings}?${key}` },
    watchlistsFast: { url: `${fast.url}/data/v1/watchlists?${key}` },
    watchlistsMain: { url: `${main.url}/data/v1/watchlists?${key}` },
  };
  for (const [name, t] of Object.entries(targets)) {
    const r = await fetch(t.url, { headers: t.headers });
    if (r.status !== 200) throw new Error(`${name}: ${r.status} ${await r.text()}`);
  }
  // the parent asks for this process's CPU time around each run: CPU per request is this machine's
  // steadiest figure (throughput moves with whatever else the two cores run)
  process.on("message", (m) => {
    if (m === "cpu") {
      const u = process.cpuUsage();
      process.send!({ cpu: u.user + u.system });
    }
  });
  process.send!({ targets, bytes: body.length, built, days: fx.dates.length, stocks: fx.snapshot.companies.length });
}

/** Requests/s, p99 (ms), failed requests, and the servers' CPU µs per request. */
type Measured = { rps: number; p99: number; bad: number; cpuPerReq: number };
type Load = Omit<Measured, "cpuPerReq"> & { requests: number };

const HAS_WRK = (() => {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" });
    return true;
  } catch (e) {
    // wrk --version exits 1 after printing its version; only a missing binary is ENOENT
    return (e as NodeJS.ErrnoException).code !== "ENOENT";
  }
})();

/** wrk's figures: requests/s, p99 (ms), non-2xx responses and socket errors. */
async function measureWrk(t: Target): Promise<Load> {
  const args = ["-t1", `-c${CONNECTIONS}`, `-d${SECONDS}s`, "--latency"];
  for (const [k, v] of Object.entries(t.headers ?? {})) args.push("-H", `${k}: ${v}`);
  const { stdout } = await promisify(execFile)("wrk", [...args, t.url]);
  const rps = Number(stdout.match(/Requests\/sec:\s+([\d.]+)/)?.[1]);
  const p = stdout.match(/\s99%\s+([\d.]+)(us|ms|s)\b/);
  const p99 = p ? Number(p[1]) * (p[2] === "us" ? 0.001 : p[2] === "s" ? 1000 : 1) : Number.NaN;
  const non2xx = Number(stdout.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
  const errs = stdout.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const bad = non2xx + (errs ? errs.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  const requests = Number(stdout.match(/(\d+) requests in/)?.[1]);
  return { rps, p99, bad, requests };
}

async function measureAutocannon(t: Target): Promise<Load> {
  const r = await autocannon({
    url: t.url,
    headers: t.headers,
    connections: CONNECTIONS,
    duration: SECONDS,
    pipelining: 1,
  });
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    bad: r.non2xx + r.errors + r.timeouts,
    requests: r.requests.total,
  };
}

/** The child's CPU time so far (µs). */
const cpuOf = (child: ChildProcess) =>
  new Promise<number>((resolve) => {
    const on = (m: unknown) => {
      if (m && typeof m === "object" && "cpu" in m) {
        child.off("message", on);
        resolve((m as { cpu: number }).cpu);
      }
    };
    child.on("message", on);
    child.send("cpu");
  });

async function measure(child: ChildProcess, t: Target): Promise<Measured> {
  const before = await cpuOf(child);
  const load = await (HAS_WRK ? measureWrk(t) : measureAutocannon(t));
  const cpu = (await cpuOf(child)) - before;
  return { rps: load.rps, p99: load.p99, bad: load.bad, cpuPerReq: cpu / Math.max(1, load.requests) };
}

/** Median by throughput (p99 and errors from the same run). */
const median = (xs: Measured[]) => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)];

/**
 * The median of each round's own ratio a/b, with its range (the two runs of a round are seconds
 * apart), and the ratio of the median CPU per request b/a (the throughput the CPU cost allows).
 */
function pairedRatio(a: Measured[], b: Measured[]): { median: number; text: string } {
  const r = a.map((x, k) => x.rps / b[k].rps).sort((x, y) => x - y);
  const m = r[Math.floor(r.length / 2)];
  const cpu = medianOf(b.map((x) => x.cpuPerReq)) / medianOf(a.map((x) => x.cpuPerReq));
  return {
    median: m,
    text: `${m.toFixed(2)}× (${r[0].toFixed(2)}–${r[r.length - 1].toFixed(2)}), by CPU ${cpu.toFixed(2)}×`,
  };
}

const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function benchApi(): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ["--serve"], {
    execArgv: [...process.execArgv, ...serverNodeFlags()],
    stdio: "inherit",
  });
  try {
    const ready = await new Promise<Ready>((resolve, reject) => {
      child.once("message", (m) => resolve(m as Ready));
      child.once("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
    });
    console.log(
      `\nAPI reads, response cache and fast path — snapshot of ${ready.stocks} stocks × ${ready.days} trading ` +
        `days (built in ${ready.built} ms); ${HAS_WRK ? "wrk -t1" : "autocannon"}, ${CONNECTIONS} connections, ` +
        `${SECONDS} s per run, ${ROUNDS} interleaved rounds, servers in one child process; ` +
        `${RATINGS} is ${ready.bytes} bytes`,
    );
    const names = Object.keys(ready.targets);
    for (const n of names) await measure(child, ready.targets[n]); // warm every server and cache
    const runs: Record<string, Measured[]> = Object.fromEntries(names.map((n) => [n, []]));
    // This machine's throughput drifts by 2× between runs: the targets take turns in every round,
    // in reverse order every other round (what a run leaves behind, its garbage, falls on both of a pair).
    for (let k = 0; k < ROUNDS; k++)
      for (const n of k % 2 === 0 ? names : [...names].reverse()) runs[n].push(await measure(child, ready.targets[n]));
    report(runs);
  } finally {
    child.kill();
  }
}

function report(runs: Record<string, Measured[]>): void {
  const rows: string[][] = [
    [
      "read",
      "server",
      "req/s (median)",
      "p99 ms",
      "CPU µs/req",
      "ratio: median of rounds (min–max), by CPU per request",
    ],
  ];
  const row = (read: string, server: string, n: string, ratio: string) => {
    const m = median(runs[n]);
    rows.push([
      read,
      server + (m.bad ? ` (${m.bad} errors)` : ""),
      Math.round(m.rps).toLocaleString("en-US"),
      m.p99.toFixed(1),
      String(Math.round(medianOf(runs[n].map((x) => x.cpuPerReq)))),
      ratio,
    ]);
  };
  const vsEx = (n: string) => `${pairedRatio(runs[n], runs.bareExpress).text} of bare Express`;
  row("stock_ratings limit=50", "fast path (cached)", "fast", `${vsEx("fast")}; target ≥ 2`);
  row("stock_ratings limit=50", "through Express (main)", "express", vsEx("express"));
  row("stock_ratings limit=50", "bare Express, same bytes", "bareExpress", "1.00×");
  row("stock_ratings limit=50", "bare node:http, same bytes", "bareHttp", vsEx("bareHttp"));
  row(
    "GraphQL APQ GET, same fields",
    "fast path (cached)",
    "apq",
    `${pairedRatio(runs.apq, runs.fast).text} of cached REST; target ≥ 0.9`,
  );
  for (const [read, a, b] of [
    ["portfolio_holdings/101 (uncached)", "holdingsFast", "holdingsMain"],
    ["watchlists (uncached)", "watchlistsFast", "watchlistsMain"],
  ]) {
    row(read, "with the fast path", a, `${pairedRatio(runs[a], runs[b]).text} of main's; target ≥ 1 (noise ±5 %)`);
    row(read, "without it (main)", b, "1.00×");
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows)
    console.log(r.map((c, i) => (i >= 2 && i <= 4 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  "));
}

await runIfMain(import.meta.url, serve, benchApi);
