// Every metric (with a benchmark) and every series type for every stock, beside QuantStats'
// 0.88 s per series (the full metric table with a benchmark on 1,259 days, measured here).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { alignBenchmark, metricRows, performanceSeries, SERIES_TYPES, stockReturns } from "../pipeline/analytics/index.ts";
import { stageSource } from "../pipeline/sources/index.ts";
import { loadIndexSeries, loadPanel } from "../pipeline/stages/frames.ts";
import { openDuck } from "../pipeline/store/duck.ts";
import type { LevelSeries, PricePanel } from "../pipeline/types.ts";
import { ensureSampleSource } from "../jobs/sample.ts";
import { buildRealSource, hasRealData } from "./real-source.ts";

const QUANTSTATS_S_PER_SERIES = 0.88;
const silent = { info: () => undefined, warn: () => undefined };

async function load(dir: string): Promise<{ panel: PricePanel; bench: LevelSeries }> {
  const db = await openDuck();
  await stageSource(db.conn, dir);
  const panel = await loadPanel(db.conn);
  const bench = [...(await loadIndexSeries(db.conn)).values()][0];
  db.close();
  return { panel, bench };
}

function run(label: string, panel: PricePanel, bench: LevelSeries) {
  const subjects = panel.tickers.map((t, i) => ({ name: t, returns: stockReturns(panel.dates, panel.close[i]) }));
  const t0 = performance.now();
  for (const s of subjects) metricRows(s.returns, s.name, { name: "Bench", returns: alignBenchmark(s.returns.dates, bench) });
  const tm = performance.now() - t0;
  const t1 = performance.now();
  for (const s of subjects) {
    const b = { name: "Bench", returns: alignBenchmark(s.returns.dates, bench) };
    for (const type of SERIES_TYPES) performanceSeries(type, s, b);
  }
  const ts = performance.now() - t1;
  const days = Math.max(...subjects.map((s) => s.returns.dates.length));
  const per = (tm + ts) / subjects.length;
  console.log(
    `${label}: ${subjects.length} stocks × ${days} days | metrics with benchmark ${tm.toFixed(0)} ms, nine series with benchmark ${ts.toFixed(0)} ms, total ${(tm + ts).toFixed(0)} ms | ${per.toFixed(2)} ms per stock vs QuantStats ${QUANTSTATS_S_PER_SERIES * 1000} ms for the metric table alone (${((QUANTSTATS_S_PER_SERIES * 1000) / per).toFixed(0)}x)`,
  );
  const one = subjects.reduce((a, b) => (b.returns.dates.length > a.returns.dates.length ? b : a));
  const reps = 50;
  const t2 = performance.now();
  for (let k = 0; k < reps; k++) metricRows(one.returns, one.name);
  console.log(`${label}: metricRows on one ${one.returns.dates.length}-day series (no benchmark): ${((performance.now() - t2) / reps).toFixed(2)} ms`);
}

export async function benchAnalytics(): Promise<void> {
  console.log("\n== analytics: every metric and series type for every stock");
  const sample = await load(await ensureSampleSource(join(tmpdir(), "bench-sample"), silent));
  run("sample", sample.panel, sample.bench);
  if (hasRealData()) {
    const real = await load(buildRealSource(mkdtempSync(join(tmpdir(), "bench-real-"))));
    run("real S&P 500 (target < 2000 ms total)", real.panel, real.bench);
  } else console.log("../shared/data absent: real-file figures skipped");
}

if (import.meta.url === `file://${process.argv[1]}`) await benchAnalytics();
