// Child process of the scale benchmark, so each figure has its own process and peak RSS:
//   run <sourceDir> <dataDir>            a whole pipeline run
//   read <dataDir> <load|lazy>           open the published snapshot the old way (whole, in memory)
//                                        or lazily, and time per-request reads while a swap happens
// Prints one JSON line.
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { loadSnapshot } from "../pipeline/store/read/load-snapshot.ts";
import { SnapshotReader } from "../pipeline/store/read/snapshot-reader.ts";
import { readManifest, readMeta } from "../pipeline/store/snapshot/snapshots.ts";

const silent = { info: () => undefined, warn: () => undefined };
const rssMB = () => Math.round(process.memoryUsage().rss / 1e6);
const peakMB = () => Math.round(process.resourceUsage().maxRSS / 1e3);
const [mode, a, b] = process.argv.slice(2);

async function run(sourceDir: string, dataDir: string) {
  // The compiled runner, as `npm run pipeline` runs it (its worker threads start compiled code;
  // from the sources each would first load tsx). bench/scale.ts rebuilds dist/ when stale.
  // Through the command's own entry (dispatch.ts): what decides whether the source is hashed
  // before the run is part of what a nightly `npm run pipeline -- run` costs.
  const { dispatchRun } = (await import(
    process.env.SCALE_FROM_SOURCES ? "../jobs/queue/dispatch.ts" : "../dist/jobs/queue/dispatch.js"
  )) as typeof import("../jobs/queue/dispatch.ts");
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const t = performance.now();
  const cpu = process.cpuUsage();
  const { snapshotId } = await dispatchRun({ dataDir, sourceDir, catalog, log: silent, redisUrl: null, force: false });
  const meta = readMeta(dataDir, snapshotId);
  const used = process.cpuUsage(cpu);
  // CPU of every thread (workers and DuckDB's included): steadier than wall time on a shared machine
  return {
    ms: Math.round(performance.now() - t),
    cpuMs: Math.round((used.user + used.system) / 1000),
    peakMB: peakMB(),
    timings: meta.timingsMs,
    counts: meta.counts,
  };
}

const pct = (xs: number[], p: number) =>
  xs.sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;

async function read(dataDir: string, how: "load" | "lazy") {
  const id = readManifest(dataDir)!.snapshotId;
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  let t = performance.now();
  const snap = how === "load" ? await loadSnapshot(dataDir, id) : null;
  const reader = how === "lazy" ? await SnapshotReader.open(dataDir, id) : null;
  const openMs = Math.round(performance.now() - t);
  h.disable();
  const openStallMs = Math.round(h.max / 1e6);
  const tickers = (snap?.companies ?? reader!.companies).map((c) => c.ticker);
  const pick = (i: number) => tickers[(i * 7919) % tickers.length];
  const lastDate = (snap?.ratingDates ?? reader!.ratingDates).at(-1)!;
  const bench = (snap?.benchmarks ?? reader!.benchmarks)[0]?.id ?? null;
  const calls: Record<string, (i: number) => Promise<unknown>> = {
    returns: async (i) => (snap ? snap.stockReturns.get(pick(i)) : reader!.stockReturns(pick(i))),
    metrics: async (i) =>
      snap ? snap.metrics.get(`stock:${pick(i)}|${bench ?? ""}`) : reader!.metricRows("stock", pick(i), bench),
    financials: async (i) =>
      snap
        ? snap.financials.get(pick(i).toUpperCase())?.quarterly
        : reader!.financials(pick(i).toUpperCase(), "quarterly"),
    ratingsPage: async (i) =>
      snap
        ? snap.ratingsByDate.get(lastDate)?.slice(i % 50, (i % 50) + 100)
        : reader!.ratingsOn(lastDate, { offset: i % 50, limit: 100 }),
  };
  const latency: Record<string, { p50: number; p99: number; max: number }> = {};
  for (const [name, f] of Object.entries(calls)) {
    const xs: number[] = [];
    for (let i = 0; i < 200; i++) {
      t = performance.now();
      await f(i);
      xs.push(performance.now() - t);
    }
    latency[name] = { p50: +pct(xs, 0.5).toFixed(3), p99: +pct(xs, 0.99).toFixed(3), max: +Math.max(...xs).toFixed(3) };
  }
  // The swap: open the same snapshot again as the next one while requests keep arriving every
  // 5 ms; the slowest of them is the stall a request sees around a swap.
  const during: number[] = [];
  let stop = false;
  const load = (async () => {
    for (let i = 0; !stop; i++) {
      const s = performance.now();
      await Promise.all([calls.returns(i + 1000), calls.metrics(i + 2000)]);
      during.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const h2 = monitorEventLoopDelay({ resolution: 5 });
  h2.enable();
  t = performance.now();
  const next = how === "load" ? await loadSnapshot(dataDir, id) : await SnapshotReader.open(dataDir, id);
  const swapMs = Math.round(performance.now() - t);
  h2.disable();
  stop = true;
  await load;
  if (next instanceof SnapshotReader) next.close();
  const out = {
    how,
    openMs,
    openStallMs,
    rssMB: rssMB(),
    latency,
    swapMs,
    swapLoopStallMs: Math.round(h2.max / 1e6),
    slowestRequestDuringSwapMs: Math.round(Math.max(...during)),
    peakMB: peakMB(),
  };
  reader?.close();
  return out;
}

const result = mode === "read" ? await read(a, b as "load" | "lazy") : await run(a, b);
console.log(JSON.stringify(result));
process.exit(0);
