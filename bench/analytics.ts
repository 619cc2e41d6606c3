// Every metric (with a benchmark) and every series type (with a benchmark) for every stock, beside
// QuantStats 0.0.62's 0.88 s per series (its full metric table with a benchmark on 1,259 days).
// Datasets: the seeded synthetic 500-stock × 15-year market (bench/synthetic.ts); and
// ../shared/data/all_stocks_5yr.csv through the project's ingest with the S&P 500 levels, when
// present. Target: all real stocks under 2 s in one process.
// Run: `npx tsx bench/analytics.ts` (or `npm run bench -- analytics`).
import { fileURLToPath } from "node:url";
import {
  alignBenchmark,
  metricRows,
  performanceSeries,
  SERIES_TYPES,
  stockReturns,
} from "../pipeline/analytics/index.ts";
import type { LevelSeries, PricePanel, ReturnSeries } from "../pipeline/types.ts";
import { hasRealData, loadRealMarket, SHARED_DATA } from "./real-source.ts";
import { syntheticMarket } from "./synthetic.ts";

const QUANTSTATS_MS_PER_SERIES = 880;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function run(label: string, panel: PricePanel, bench: LevelSeries, target?: number): void {
  const subjects = panel.tickers.map((t, i) => ({ name: t, returns: stockReturns(panel.dates, panel.close[i]) }));
  const t0 = performance.now();
  const benches = subjects.map((s) => ({ name: "Benchmark", returns: alignBenchmark(s.returns.dates, bench) }));
  const t1 = performance.now();
  for (let i = 0; i < subjects.length; i++) metricRows(subjects[i].returns, subjects[i].name, benches[i]);
  const t2 = performance.now();
  for (let i = 0; i < subjects.length; i++)
    for (const type of SERIES_TYPES) performanceSeries(type, subjects[i], benches[i]);
  const t3 = performance.now();
  const total = t3 - t0;
  const per = total / subjects.length;
  const days = Math.max(...subjects.map((s) => s.returns.dates.length));
  console.log(
    `${label}: ${subjects.length} stocks, up to ${days} days | align ${(t1 - t0).toFixed(0)} ms, metric ` +
      `rows ${(t2 - t1).toFixed(0)} ms, ` +
      `nine series ${(t3 - t2).toFixed(0)} ms, total ${total.toFixed(0)} ` +
      `ms${target ? ` (target < ${target} ms: ${total < target ? "met" : "MISSED"})` : ""}`,
  );
  console.log(
    `${label}: ${per.toFixed(2)} ms per series for every metric and all nine series types, vs ` +
      `QuantStats ${QUANTSTATS_MS_PER_SERIES} ms for the metric table alone ` +
      `(${(QUANTSTATS_MS_PER_SERIES / per).toFixed(0)}x)`,
  );
}

/** metricRows on one long series, median of many calls after a warm-up. */
function one(label: string, subject: ReturnSeries, bench: ReturnSeries): void {
  const time = (f: () => void) => {
    for (let k = 0; k < 20; k++) f();
    const xs: number[] = [];
    for (let k = 0; k < 200; k++) {
      const t = performance.now();
      f();
      xs.push(performance.now() - t);
    }
    return median(xs).toFixed(3);
  };
  const plain = time(() => metricRows(subject, "X"));
  const withB = time(() => metricRows(subject, "X", { name: "B", returns: bench }));
  console.log(
    `${label}: metricRows on one ${subject.dates.length}-day series: ${plain} ms alone, ${withB} ms ` +
      `with a benchmark (median of 200)`,
  );
}

export async function benchAnalytics(): Promise<void> {
  console.log("\n== analytics: every metric and series type (with a benchmark) for every stock");
  const synth = syntheticMarket();
  run("synthetic 500 × 15 years", synth.panel, synth.bench);
  const full = stockReturns(
    synth.panel.dates,
    synth.panel.close.find((c) => !Number.isNaN(c[0]) && !Number.isNaN(c[c.length - 1]))!,
  );
  one("synthetic", full, alignBenchmark(full.dates, synth.bench));
  if (hasRealData()) {
    const real = await loadRealMarket();
    run("real all_stocks_5yr.csv", real.panel, real.bench, 2000);
  } else console.log(`${SHARED_DATA}/all_stocks_5yr.csv absent: real-file figures skipped`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await benchAnalytics();
