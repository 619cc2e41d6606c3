// Every metric (with a benchmark) and every series type (with a benchmark) for every stock, beside
// QuantStats 0.0.62's 0.88 s per series (its full metric table with a benchmark on 1,259 days).
// Datasets: a seeded synthetic 500-stock × 15-year panel generated here, in memory; and
// ../shared/data/all_stocks_5yr.csv (close prices, 505 stocks) with benchmark_sp500_daily.csv's
// Close levels, when present. Target: all real stocks under 2 s in one process.
// Run: `npx tsx bench/analytics.ts` (or `npm run bench -- analytics`).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { alignBenchmark, metricRows, performanceSeries, SERIES_TYPES, stockReturns } from "../pipeline/analytics/index.ts";
import { columns, lit, openDuck } from "../pipeline/store/duck.ts";
import type { LevelSeries, PricePanel, ReturnSeries } from "../pipeline/types.ts";

const QUANTSTATS_MS_PER_SERIES = 880;
const DATA_DIR = fileURLToPath(new URL("../../shared/data/", import.meta.url));

/** Seeded panel: business days over `years`, GBM-like closes with a market factor; some listings
 * start late, some end early, and ~1% of prices are missing. */
export function syntheticPanel(stocks = 500, years = 15, seed = 42): { panel: PricePanel; bench: LevelSeries } {
  let s = seed >>> 0;
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
  const normal = () => Math.sqrt(-2 * Math.log(rnd() || 1e-12)) * Math.cos(2 * Math.PI * rnd());
  const dates: string[] = [];
  for (let t = Date.UTC(2009, 0, 2); dates.length < years * 252; t += 86_400_000) {
    const wd = new Date(t).getUTCDay();
    if (wd !== 0 && wd !== 6) dates.push(new Date(t).toISOString().slice(0, 10));
  }
  const n = dates.length;
  const market = Float64Array.from({ length: n }, () => 0.0003 + 0.011 * normal());
  const levels = new Float64Array(n);
  for (let d = 0, v = 1000; d < n; d++) levels[d] = v *= 1 + market[d];
  const close: Float64Array[] = [];
  const tickers: string[] = [];
  for (let i = 0; i < stocks; i++) {
    tickers.push(`S${String(i).padStart(3, "0")}`);
    const beta = 0.5 + rnd(), vol = 0.008 + 0.02 * rnd();
    const start = rnd() < 0.2 ? Math.floor(rnd() * n * 0.6) : 0;
    const end = rnd() < 0.05 ? n - Math.floor(rnd() * n * 0.3) : n;
    const c = new Float64Array(n).fill(NaN);
    for (let d = start, p = 10 + 90 * rnd(); d < end; d++) {
      p *= 1 + beta * market[d] + vol * normal();
      if (rnd() > 0.01) c[d] = p;
    }
    close.push(c);
  }
  return { panel: { dates, tickers, close }, bench: { dates, levels } };
}

/** all_stocks_5yr.csv as a panel of close prices, and the S&P 500 Close levels. */
async function realPanel(): Promise<{ panel: PricePanel; bench: LevelSeries } | null> {
  const prices = `${DATA_DIR}all_stocks_5yr.csv`;
  const index = `${DATA_DIR}benchmark_sp500_daily.csv`;
  if (!existsSync(prices) || !existsSync(index)) return null;
  const db = await openDuck();
  try {
    const [dateCol] = await columns(db.conn, `SELECT DISTINCT strftime(CAST(date AS DATE), '%Y-%m-%d') AS d FROM read_csv(${lit(prices)}) ORDER BY d`);
    const dates = dateCol as string[];
    const pos = new Map(dates.map((d, i) => [d, i]));
    const [names, ds, cs] = await columns(
      db.conn,
      `SELECT Name, strftime(CAST(date AS DATE), '%Y-%m-%d'), CAST(close AS DOUBLE) FROM read_csv(${lit(prices)}) WHERE close IS NOT NULL ORDER BY Name, date`,
    );
    const tickers: string[] = [];
    const close: Float64Array[] = [];
    for (let r = 0; r < names.length; r++) {
      if (names[r] !== tickers[tickers.length - 1]) {
        tickers.push(names[r] as string);
        close.push(new Float64Array(dates.length).fill(NaN));
      }
      close[close.length - 1][pos.get(ds[r] as string)!] = cs[r] as number;
    }
    const [bd, bl] = await columns(
      db.conn,
      `SELECT strftime(CAST("Date" AS DATE), '%Y-%m-%d'), CAST("Close" AS DOUBLE) FROM read_csv(${lit(index)}) WHERE "Close" IS NOT NULL ORDER BY 1`,
    );
    return { panel: { dates, tickers, close }, bench: { dates: bd as string[], levels: Float64Array.from(bl as number[]) } };
  } finally {
    db.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function run(label: string, panel: PricePanel, bench: LevelSeries, target?: number): void {
  const subjects = panel.tickers.map((t, i) => ({ name: t, returns: stockReturns(panel.dates, panel.close[i]) }));
  const t0 = performance.now();
  const benches = subjects.map((s) => ({ name: "Benchmark", returns: alignBenchmark(s.returns.dates, bench) }));
  const t1 = performance.now();
  for (let i = 0; i < subjects.length; i++) metricRows(subjects[i].returns, subjects[i].name, benches[i]);
  const t2 = performance.now();
  for (let i = 0; i < subjects.length; i++) for (const type of SERIES_TYPES) performanceSeries(type, subjects[i], benches[i]);
  const t3 = performance.now();
  const total = t3 - t0;
  const per = total / subjects.length;
  const days = Math.max(...subjects.map((s) => s.returns.dates.length));
  console.log(
    `${label}: ${subjects.length} stocks, up to ${days} days | align ${(t1 - t0).toFixed(0)} ms, metric rows ${(t2 - t1).toFixed(0)} ms, ` +
      `nine series ${(t3 - t2).toFixed(0)} ms, total ${total.toFixed(0)} ms${target ? ` (target < ${target} ms: ${total < target ? "met" : "MISSED"})` : ""}`,
  );
  console.log(
    `${label}: ${per.toFixed(2)} ms per series for every metric and all nine series types, vs QuantStats ${QUANTSTATS_MS_PER_SERIES} ms for the metric table alone (${(QUANTSTATS_MS_PER_SERIES / per).toFixed(0)}x)`,
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
  console.log(`${label}: metricRows on one ${subject.dates.length}-day series: ${plain} ms alone, ${withB} ms with a benchmark (median of 200)`);
}

export async function benchAnalytics(): Promise<void> {
  console.log("\n== analytics: every metric and series type (with a benchmark) for every stock");
  const synth = syntheticPanel();
  run("synthetic 500 × 15 years", synth.panel, synth.bench);
  const full = stockReturns(synth.panel.dates, synth.panel.close.find((c) => !Number.isNaN(c[0]) && !Number.isNaN(c[c.length - 1]))!);
  one("synthetic", full, alignBenchmark(full.dates, synth.bench));
  const real = await realPanel();
  if (real) run("real all_stocks_5yr.csv", real.panel, real.bench, 2000);
  else console.log(`${DATA_DIR}all_stocks_5yr.csv absent: real-file figures skipped`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await benchAnalytics();
